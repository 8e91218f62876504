import type { TableEvictedRecord } from "../bounds/evictions.js";
import type { PayloadOptions } from "../records/rpc-record.js";
import { rpcRecord, sessionRecord } from "../records/rpc-record.js";
import type { Judged, MessageContext, RpcEvent } from "../mcp/rpc-event.js";
import type { SessionRecord } from "../mcp/sessions.js";
import { invalidEvent, McpTracker, type MessageHandler, type TrackedContext, type TrackerLimits } from "../mcp/tracker.js";
import type { Decision } from "../mcp/decision.js";
import { failedJudgement, judgeReadings, settleEnforcement } from "../policy/enforcement.js";
import type { Policy } from "../policy/policy.js";

/** What the pipeline made of one message: its decision (always one) and the records it wrote. */
export interface PipelineResult extends Judged {
  records: Record<string, unknown>[];
}

/** Where records go: `loud` ones (invalid, denied, flagged, mismatched) at warn level. */
export interface RecordOutput {
  rpc(record: Record<string, unknown>, loud: boolean, hidden: Set<string>, event: RpcEvent): void;
  session(record: Record<string, unknown>): void;
  /** A table of the tracker let entries go. */
  evicted?(record: TableEvictedRecord): void;
}

export interface MessagePipelineOptions {
  policy: Pick<Policy, "judge" | "enforcing">;
  removeDeniedTools: boolean;
  payloads: PayloadOptions;
  output: RecordOutput;
  limits: TrackerLimits;
  now?: () => number;
}

/**
 * One message, one readable sequence: the tracker correlates it, the policy judges every plausible reading
 * (a judgement that throws fails closed), enforcement settles its effect, the records module builds the
 * record, and the output writes it. The caller gets the decision back and acts on it.
 */
export class MessagePipeline implements MessageHandler {
  readonly tracker: McpTracker;

  constructor(private readonly o: MessagePipelineOptions) {
    // Messages the tracker reports on its own (requests never answered) take the same path.
    this.tracker = new McpTracker({ rpc: (e) => void this.finish(e), session: (r) => this.session(r), evicted: (r) => o.output.evicted?.(r) }, o.limits, o.now);
  }

  get enforcing(): boolean {
    return this.o.policy.enforcing;
  }

  /** One parsed JSON-RPC message. */
  message(ctx: TrackedContext, raw: unknown, bytes: number): PipelineResult {
    return this.finish(this.tracker.read(ctx, raw, bytes));
  }

  /** Something that should have been JSON-RPC and was not. */
  invalid(ctx: MessageContext | TrackedContext, reason: string, bytes: number): PipelineResult {
    return this.finish(invalidEvent(ctx, reason, bytes));
  }

  private finish(event: RpcEvent): PipelineResult {
    const decision = this.judge(event);
    settleEnforcement(event, decision, this.o.removeDeniedTools);
    event.decision = decision;
    const hidden = new Set<string>();
    const record = rpcRecord(event, this.o.payloads, hidden);
    const loud = event.kind === "invalid" || event.headerMismatch !== undefined || event.roundProblem !== undefined || event.task?.problem !== undefined || decision.action !== "allow";
    this.o.output.rpc(record, loud, hidden, event);
    return { event, decision, records: [record] };
  }

  private judge(event: RpcEvent): Decision {
    try {
      return judgeReadings(this.o.policy, event);
    } catch (err) {
      return failedJudgement(this.o.policy.enforcing, err);
    }
  }

  private session(r: SessionRecord): void {
    this.o.output.session(sessionRecord(r, this.o.payloads));
  }
}
