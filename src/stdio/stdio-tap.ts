import type { Direction } from "../mcp/correlator.js";
import { splitBatch, type RequestId } from "../mcp/jsonrpc.js";
import type { Judged } from "../mcp/rpc-event.js";
import type { MessageHandler, TrackedContext } from "../mcp/tracker.js";
import { isEnforcedDeny, policyError, replacementForServerMessage, unreadableError } from "../mcp/replies.js";
import { LineFramer, type LineSink } from "./line-framer.js";
import { leadingId, readLine } from "./read-line.js";

export interface StdioTapOptions {
  /** Judges and records every message, and returns its decision. */
  pipeline: MessageHandler;
  /** `stdio:LABEL` */
  server: string;
  /** One launch is one session (and one flow). */
  session: string;
  maxInspectBytes: number;
  /** Enforce mode: lines are held until judged; denied ones never reach their peer. */
  enforce?: { removeDeniedTools: boolean };
  toServer(bytes: Buffer): void;
  toClient(bytes: Buffer): void;
  /** A stage failed on a line (a pin store that cannot be written, say): reported, never thrown at the relay. */
  onError(err: unknown, direction: Direction): void;
}

/**
 * Both directions of one stdio launch: frames the lines, hands every message to the pipeline (which
 * judges and records it, and returns the decision) and, in enforce mode, forwards only what was judged. In monitor mode bytes are
 * forwarded as they arrive, before anything else is done with them.
 */
export class StdioTap {
  private readonly fromClientFramer: LineFramer;
  private readonly fromServerFramer: LineFramer;

  constructor(private readonly o: StdioTapOptions) {
    this.fromClientFramer = new LineFramer(o.maxInspectBytes, this.sink("client_to_server"));
    this.fromServerFramer = new LineFramer(o.maxInspectBytes, this.sink("server_to_client"));
  }

  get enforcing(): boolean {
    return this.o.enforce !== undefined;
  }

  fromClient(chunk: Buffer): void {
    if (!this.o.enforce) this.o.toServer(chunk);
    this.fromClientFramer.push(chunk);
  }

  fromServer(chunk: Buffer): void {
    if (!this.o.enforce) this.o.toClient(chunk);
    this.fromServerFramer.push(chunk);
  }

  clientEnded(): void {
    this.fromClientFramer.end();
  }

  serverEnded(): void {
    this.fromServerFramer.end();
  }

  context(direction: Direction, reason?: string): TrackedContext {
    const { server, session } = this.o;
    return {
      flow: session,
      transport: "stdio",
      server,
      path: "",
      session,
      protocolVersion: null,
      direction,
      scope: session,
      ...(reason !== undefined ? { reason } : {}),
    };
  }

  private sink(direction: Direction): LineSink {
    const forward = direction === "client_to_server" ? (b: Buffer) => this.o.toServer(b) : (b: Buffer) => this.o.toClient(b);
    let head: Buffer | null = null;
    return {
      line: (content, raw) => {
        try {
          this.onLine(direction, content, raw, forward);
        } catch (err) {
          this.o.onError(err, direction);
          // Monitor mode has forwarded the bytes already; enforce mode cannot vouch for the line: it stays back.
          if (this.enforcing) this.answerUnreadable(direction, leadingId(raw), "internal error while judging it");
        }
      },
      oversizedStart: (bytes) => {
        head = bytes;
        // Server lines too large to judge are dropped in enforce mode as client ones are: nothing unjudged
        // reaches either peer.
      },
      oversizedData: () => {},
      oversizedEnd: (total) => {
        const enforced = this.enforcing;
        const what = `line of ${total} bytes is larger than --max-inspect-bytes (${this.o.maxInspectBytes})`;
        const id = head ? leadingId(head) : null;
        head = null;
        try {
          this.o.pipeline.invalid(this.context(direction), enforced ? `${what}: not forwarded (enforce mode cannot judge it)` : `${what}: forwarded uninspected`, total);
        } catch (err) {
          this.o.onError(err, direction);
        }
        if (enforced) this.answerUnreadable(direction, id, what);
      },
    };
  }

  private onLine(direction: Direction, content: Buffer, raw: Buffer, forward: (b: Buffer) => void): void {
    const reading = readLine(content);
    // Blank lines carry no message and are not recorded: monitor mode passes them on with the rest, enforce
    // mode drops them (nothing unrecorded reaches a peer).
    if (reading.blank) return;
    if (reading.value === undefined) {
      this.o.pipeline.invalid(this.context(direction), this.enforcing ? `${reading.problem}; not forwarded` : reading.problem!, raw.length);
      if (this.enforcing) this.answerUnreadable(direction, null, reading.problem!);
      return;
    }
    const { batch, messages } = splitBatch(reading.value);
    const reason = reading.problem && this.enforcing ? `${reading.problem}; not forwarded` : reading.problem;
    const judged = messages.map((m, index) =>
      this.o.pipeline.message({ ...this.context(direction, reason), ...(batch ? { batch: { index, size: messages.length } } : {}) }, m, batch ? Buffer.byteLength(JSON.stringify(m) ?? "") : raw.length),
    );
    if (!this.o.enforce) return;
    const events = judged.map((j) => j.event);
    // Read leniently, or JSON that is not JSON-RPC: its receiver might read it otherwise. Refused, and
    // whoever waits for an answer to it gets an error instead of silence.
    const problem = reading.problem ?? events.find((e) => e.kind === "invalid")?.reason;
    if (problem !== undefined) {
      for (const e of events) {
        if (e.id === null || e.id === undefined) continue;
        if (e.kind === "request" || (e.kind === "invalid" && e.method !== undefined)) this.refuse(e, problem);
        else forward(jsonLine(unreadableError(e.id, problem)));
      }
      return;
    }
    if (!judged.some(isEnforcedDeny)) {
      forward(raw);
      return;
    }
    if (direction === "client_to_server") this.enforceClientLine(judged, batch, forward);
    else this.enforceServerLine(judged, batch, forward);
  }

  /** As on HTTP: one denied request or notification refuses the whole line; denied responses are replaced. */
  private enforceClientLine(judged: Judged[], batch: boolean, forward: (b: Buffer) => void): void {
    const denied = judged.filter(isEnforcedDeny);
    const requests = judged.filter(({ event: e }) => e.kind === "request" && e.id !== null && e.id !== undefined);
    if (requests.length > 0 || denied.some((j) => j.event.kind === "notification")) {
      const errors = requests.map(({ event: r, decision }) => {
        this.o.pipeline.tracker.correlator.answer(r.server, this.o.session, r.direction, r.id!);
        return policyError(r.id!, decision.enforced ? decision : denied[0]!.decision);
      });
      if (errors.length > 0) this.o.toClient(jsonLine(batch ? errors : errors[0]));
      return;
    }
    const out = judged.map((j) => (isEnforcedDeny(j) ? policyError(j.event.id ?? null, j.decision) : j.event.raw));
    forward(jsonLine(batch ? out : out[0]));
  }

  private enforceServerLine(judged: Judged[], batch: boolean, forward: (b: Buffer) => void): void {
    const out = judged.map((j) => (isEnforcedDeny(j) ? replacementForServerMessage(j, this.o.enforce!.removeDeniedTools) : j.event.raw)).filter((m) => m !== null);
    if (out.length === 0) return;
    forward(jsonLine(batch ? out : out[0]));
  }

  private refuse(e: Judged["event"], problem: string): void {
    this.o.pipeline.tracker.correlator.answer(e.server, this.o.session, e.direction, e.id!);
    const toRequester = e.direction === "client_to_server" ? this.o.toClient : this.o.toServer;
    toRequester(jsonLine(unreadableError(e.id!, problem)));
  }

  /** A line that could not be read at all: a request it may have been gets an error rather than silence. */
  private answerUnreadable(direction: Direction, id: RequestId | null, problem: string): void {
    if (direction === "client_to_server") {
      if (id !== null) this.o.pipeline.tracker.correlator.answer(this.o.server, this.o.session, direction, id);
      this.o.toClient(jsonLine(unreadableError(id, problem)));
      return;
    }
    // From the server: if it was a response, the request it answers gets the error instead.
    if (id !== null && this.o.pipeline.tracker.correlator.answer(this.o.server, this.o.session, "client_to_server", id)) {
      this.o.toClient(jsonLine(unreadableError(id, problem)));
    }
  }
}

function jsonLine(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`);
}
