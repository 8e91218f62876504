import type { Direction } from "../mcp/correlator.js";
import { idKey, splitBatch, type RequestId } from "../mcp/jsonrpc.js";
import type { Judged, Judgement } from "../mcp/rpc-event.js";
import type { MessageHandler, TrackedContext } from "../mcp/tracker.js";
import { answersNothing, asciiJson, isEnforcedDeny, policyError, replacementForServerMessage, unreadableError } from "../mcp/replies.js";
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

  context(direction: Direction, reason?: string, extra: Partial<TrackedContext> = {}): TrackedContext {
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
      ...extra,
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
    const enforcing = this.enforcing;
    // Enforce mode refuses a line its readers disagree on, unless escaping makes them agree (then it forwards
    // that); monitor mode records the doubt when a reader reads what the record would not show.
    const doubt = enforcing ? (reading.canonical ? undefined : reading.doubt) : reading.recordDoubt;
    const problem = reading.problem ?? (reading.values.length === 0 ? "line is not JSON" : undefined);
    const judged: Judged[] = [];
    if (reading.values.length === 0) {
      const readability = doubt !== undefined ? { readability: { reason: doubt, alternates: [] } } : {};
      judged.push(atOnce(this.o.pipeline.invalid(this.context(direction, undefined, readability), enforcing ? `${problem}; not forwarded` : problem!, raw.length)));
    }
    const single = reading.values.length === 1 ? splitBatch(reading.values[0]) : null;
    const reason = problem && enforcing ? `${problem}; not forwarded` : problem;
    let index = 0;
    for (const value of reading.values) {
      const { batch, messages } = splitBatch(value);
      for (const [i, m] of messages.entries()) {
        const alternates = reading.alternates.get(index++) ?? [];
        const readability = doubt !== undefined ? { readability: { reason: doubt, alternates } } : {};
        const extra = { ...readability, ...(batch ? { batch: { index: i, size: messages.length } } : {}) };
        judged.push(atOnce(this.o.pipeline.message(this.context(direction, reason, extra), m, batch ? Buffer.byteLength(JSON.stringify(m) ?? "") : raw.length)));
      }
    }
    // What other readers read besides: a message of its own each, so that what ran is counted.
    for (const h of reading.hidden) {
      const why = enforcing ? `${h.reason}; not forwarded` : h.reason;
      judged.push(atOnce(this.o.pipeline.message(this.context(direction, undefined, { readability: { reason: why, alternates: [] } }), h.message, Buffer.byteLength(JSON.stringify(h.message) ?? ""))));
    }
    if (!this.o.enforce) return;
    const events = judged.map((j) => j.event);
    // Read leniently, read otherwise by some reader, or JSON that is not JSON-RPC: its receiver might read it
    // otherwise. Refused whole, and whoever waits for an answer to any reading of it gets an error, not silence.
    const refusal = problem ?? doubt ?? events.find((e) => e.kind === "invalid")?.reason;
    if (refusal !== undefined || single === null) {
      this.refuseLine(direction, events, refusal ?? reading.doubt ?? "unreadable line", forward);
      return;
    }
    if (!judged.some(isEnforcedDeny)) {
      forward(reading.canonical?.() ?? raw);
      return;
    }
    if (direction === "client_to_server") this.enforceClientLine(judged, single.batch, forward);
    else this.enforceServerLine(judged, single.batch, forward);
  }

  /** A line refused whole: each request read in it gets -32052, and so does each pending request an answer read in it answered. */
  private refuseLine(direction: Direction, events: Judged["event"][], problem: string, forward: (b: Buffer) => void): void {
    const done = new Set<string>();
    for (const e of events) {
      if (e.id === null || e.id === undefined) continue;
      const key = `${e.kind === "request" ? "ask" : "answer"}:${idKey(e.id)}`;
      if (done.has(key)) continue;
      done.add(key);
      if (e.kind === "request" || (e.kind === "invalid" && e.method !== undefined)) this.refuse(e, problem);
      // An answer to a request of its peer: that request gets the error instead (an answer to none gets nothing).
      else if (e.method !== undefined || e.kind === "invalid") forward(jsonLine(unreadableError(e.id, problem)));
    }
    // Nothing in it had an id: a client that sent it still hears why (as JSON-RPC answers a parse error).
    if (done.size === 0 && direction === "client_to_server") this.o.toClient(jsonLine(unreadableError(null, problem)));
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
    const out = judged.filter((j) => !answersNothing(j.decision)).map((j) => (isEnforcedDeny(j) ? policyError(j.event.id ?? null, j.decision) : j.event.raw));
    if (out.length > 0) forward(jsonLine(batch ? out : out[0]));
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

/**
 * A stdio launch judges with this process's own counters and pins (shared state, `--state`, is the proxy's),
 * so every judgement comes at once; one that did not is a line the tap cannot vouch for (refused, reported).
 */
function atOnce(j: Judgement): Judged {
  if (j instanceof Promise) throw new Error("a stdio message waited for shared state, which stdio launches do not use");
  return j;
}

/**
 * A line the proxy writes: ASCII only (every other character a `\uXXXX` escape), so that no text a peer chose
 * (an argument kept in a re-written batch, a kept tool's description) carries a NEL, U+2028 or U+2029 that a
 * reader splitting as str.splitlines() would end a line at.
 */
function jsonLine(value: unknown): Buffer {
  return Buffer.from(`${asciiJson(value)}\n`);
}
