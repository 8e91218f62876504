import type { TableEvictedRecord } from "../bounds/evictions.js";
import type { PayloadOptions } from "../records/rpc-record.js";
import { rpcRecord, sessionRecord } from "../records/rpc-record.js";
import type { Judged, Judgement, MessageContext, RpcEvent } from "../mcp/rpc-event.js";
import type { SessionRecord } from "../mcp/sessions.js";
import { invalidEvent, McpTracker, type MessageHandler, type TrackedContext, type TrackerLimits } from "../mcp/tracker.js";
import type { Decision } from "../mcp/decision.js";
import { failedJudgement, judgeReadings, settleEnforcement } from "../policy/enforcement.js";
import type { Policy } from "../policy/policy.js";
import type { WaitingBudget } from "../budget/waiting-budget.js";

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
  /** A record that waited for its judgement could not be written (a caller that awaits it sees the error too). */
  failed?(err: unknown, event: RpcEvent): void;
  /**
   * A message whose record waits (for its sliced scan, for shared state): `written` settles once its record is
   * written or failed, so that what its exchange writes last (the `http` record) can wait for what it taught.
   */
  waiting?(event: RpcEvent, written: Promise<unknown>): void;
}

export interface MessagePipelineOptions {
  policy: Pick<Policy, "decide" | "judge" | "enforcing">;
  removeDeniedTools: boolean;
  payloads: PayloadOptions;
  output: RecordOutput;
  limits: TrackerLimits;
  /** Counts the bytes of what waits, per stream (their sources are paused past its budget); none: not counted. */
  waiting?: WaitingBudget;
  now?: () => number;
}

/**
 * One message, one readable sequence: the tracker correlates it, the policy judges every plausible reading
 * (a judgement that throws fails closed), enforcement settles its effect, the records module builds the
 * record, and the output writes it. The caller gets the decision back and acts on it.
 *
 * A message the policy must ask shared state about (src/state/) is judged asynchronously: the caller gets a
 * promise, settled once its record is written. Its stream keeps its order: every later message of the same
 * exchange (of the same stdio launch) gets a promise too, settled after those before it, so records, and
 * what enforcement sends, never overtake a message still waiting. Other streams go on. What waits is counted
 * in bytes per stream (`waiting`), so that a stream past its budget stops being read.
 */
export class MessagePipeline implements MessageHandler {
  readonly tracker: McpTracker;
  /** Per stream with a message still waiting: the last of its records to be written. */
  private readonly waiting = new Map<string, Promise<unknown>>();

  constructor(private readonly o: MessagePipelineOptions) {
    // Messages the tracker reports on its own (requests never answered) take the same path.
    this.tracker = new McpTracker({ rpc: (e) => void this.finish(e), session: (r) => this.session(r), evicted: (r) => o.output.evicted?.(r) }, o.limits, o.now);
  }

  /** The byte budget of what waits, when counted: a transport attaches each stream's source to it. */
  get waitingBudget(): WaitingBudget | undefined {
    return this.o.waiting;
  }

  get enforcing(): boolean {
    return this.o.policy.enforcing;
  }

  /** One parsed JSON-RPC message. */
  message(ctx: TrackedContext, raw: unknown, bytes: number): Judgement {
    return this.finish(this.tracker.read(ctx, raw, bytes));
  }

  /** Something that should have been JSON-RPC and was not. */
  invalid(ctx: MessageContext | TrackedContext, reason: string, bytes: number): Judgement {
    return this.finish(invalidEvent(ctx, reason, bytes));
  }

  /** Streams with a message waiting for its judgement (or behind one that is). */
  get waitingStreams(): number {
    return this.waiting.size;
  }

  private finish(event: RpcEvent): Judgement {
    const key = streamKey(event);
    const before = this.waiting.get(key);
    const decision = this.judge(event);
    if (before === undefined && !(decision instanceof Promise)) return this.record(event, decision);
    const judged = Promise.all([before, decision]).then(([, d]) => {
      // The last of its stream: the stream no longer waits once this record is written (or failed).
      if (this.waiting.get(key) === last) this.waiting.delete(key);
      return this.record(event, d);
    });
    // The stream's next message waits for this record, written or failed.
    const last: Promise<unknown> = judged.catch((err: unknown) => this.o.output.failed?.(err, event));
    this.waiting.set(key, last);
    this.o.output.waiting?.(event, last);
    const budget = this.o.waiting;
    if (budget) {
      // Counted from now until its record is written or failed, charged to its sender: its own bytes, at least one.
      const bytes = Math.max(1, event.bytes);
      void last.then(budget.hold(key, bytes, event.direction));
    }
    return judged;
  }

  private record(event: RpcEvent, decision: Decision): PipelineResult {
    settleEnforcement(event, decision, this.o.removeDeniedTools);
    event.decision = decision;
    const hidden = new Set<string>();
    const record = rpcRecord(event, this.o.payloads, hidden);
    const loud = event.kind === "invalid" || event.headerMismatch !== undefined || event.roundProblem !== undefined || event.task?.problem !== undefined || decision.action !== "allow";
    this.o.output.rpc(record, loud, hidden, event);
    return { event, decision, records: [record] };
  }

  private judge(event: RpcEvent): Decision | Promise<Decision> {
    const failed = (err: unknown): Decision => failedJudgement(this.o.policy.enforcing, err);
    try {
      const decision = judgeReadings(this.o.policy, event);
      return decision instanceof Promise ? decision.catch(failed) : decision;
    } catch (err) {
      return failed(err);
    }
  }

  private session(r: SessionRecord): void {
    this.o.output.session(sessionRecord(r, this.o.payloads));
  }
}

/**
 * The order a message keeps: that of its exchange over HTTP (its request body, then its answers), that of its
 * direction on a stdio launch (two pipes, each in its own order).
 */
function streamKey(e: RpcEvent): string {
  return e.transport === "stdio" ? `${e.flow}\0${e.direction}` : e.flow;
}
