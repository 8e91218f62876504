import type { Direction } from "../mcp/correlator.js";
import { idKey, splitBatch, type RequestId } from "../mcp/jsonrpc.js";
import type { Judged, Judgement } from "../mcp/rpc-event.js";
import type { MessageHandler, TrackedContext } from "../mcp/tracker.js";
import { answersNothing, asciiJson, droppedError, isEnforcedDeny, policyError, replacementForServerMessage, unreadableError } from "../mcp/replies.js";
import { LineFramer, type LineSink } from "./line-framer.js";
import { leadingId, readLine, type LineReading } from "./read-line.js";
import { HeldLineQueue } from "./held-line-queue.js";

/** What `--intercept` does for a launch: which judged lines it holds, and how each held one is released. */
export interface LineIntercept {
  matches(judged: readonly Judged[]): boolean;
  hold(where: { flow: string; peer: string; server: string; session: string | null; transport: "stdio" }, judged: readonly Judged[], message: unknown): Promise<{ send: "original" } | { send: "edited"; message: unknown } | { send: "nothing"; reason: string }>;
  /** Bytes of lines that may wait behind held ones, each direction. */
  readonly maxWaitingBytes: number;
}

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
  /** `--intercept` (src/intercept/): lines with a message it selects wait for a person; every line is forwarded once judged. */
  intercept?: LineIntercept;
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
  /** With `--intercept`: each direction's lines in order, those behind a held line waiting for it. */
  private readonly outputs: Record<Direction, HeldLineQueue> | null;

  constructor(private readonly o: StdioTapOptions) {
    // Before the framers: their sinks forward through these.
    const waiting = o.intercept?.maxWaitingBytes ?? 0;
    this.outputs = o.intercept ? { client_to_server: new HeldLineQueue(o.toServer, waiting), server_to_client: new HeldLineQueue(o.toClient, waiting) } : null;
    this.fromClientFramer = new LineFramer(o.maxInspectBytes, this.sink("client_to_server"));
    this.fromServerFramer = new LineFramer(o.maxInspectBytes, this.sink("server_to_client"));
  }

  get enforcing(): boolean {
    return this.o.enforce !== undefined;
  }

  /** Lines go out once framed and judged (enforce mode, `--intercept`); otherwise bytes go out as they come. */
  private get byLine(): boolean {
    return this.o.enforce !== undefined || this.o.intercept !== undefined;
  }

  fromClient(chunk: Buffer): void {
    if (!this.byLine) this.o.toServer(chunk);
    this.fromClientFramer.push(chunk);
  }

  fromServer(chunk: Buffer): void {
    if (!this.byLine) this.o.toClient(chunk);
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
    const forward = this.forwarder(direction);
    /** Monitor mode with `--intercept` forwards what it does not hold line by line, in order. */
    const monitorByLine = !this.enforcing && this.byLine;
    let head: Buffer | null = null;
    return {
      line: (content, raw) => {
        try {
          this.onLine(direction, content, raw, forward);
        } catch (err) {
          this.o.onError(err, direction);
          // Monitor mode has forwarded the bytes already; enforce mode cannot vouch for the line: it stays back.
          if (this.enforcing) this.answerUnreadable(direction, leadingId(raw), "internal error while judging it");
          else if (monitorByLine) forward(raw);
        }
      },
      oversizedStart: (bytes) => {
        head = bytes;
        if (monitorByLine) forward(bytes);
        // Server lines too large to judge are dropped in enforce mode as client ones are: nothing unjudged
        // reaches either peer.
      },
      oversizedData: (piece) => {
        if (monitorByLine) forward(piece);
      },
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

  /**
   * Where a direction's judged lines go: straight to the peer, or (`--intercept`) in order behind held ones.
   * `judged`: what the line was judged to carry (none for a line that could not be read).
   */
  private forwarder(direction: Direction): Forward {
    const write = direction === "client_to_server" ? (b: Buffer) => this.o.toServer(b) : (b: Buffer) => this.o.toClient(b);
    const output = this.outputs?.[direction];
    if (!output) return write;
    return (b, judged) => {
      if (output.send(b)) return;
      // Too much waits behind held lines: this one is not forwarded, and whoever waits for an answer in it hears why.
      const reason = `dropped at the proxy: ${output.waitingBytes} bytes already wait behind intercepted messages`;
      this.o.onError(new Error(`${reason}; line of ${b.length} bytes not forwarded`), direction);
      this.answerNotForwarded(direction, b, judged ?? [], reason);
    };
  }

  /**
   * A line not forwarded: each request in it gets error -32054 back, and so does, in place of each answer in it,
   * the request it answered (written to its peer at once: the error is the proxy's own line, it waits for no
   * held one). A line never read is taken for a request by its leading id.
   */
  private answerNotForwarded(direction: Direction, b: Buffer, judged: readonly Judged[], reason: string): void {
    const correlator = this.o.pipeline.tracker.correlator;
    const toSender = direction === "client_to_server" ? this.o.toClient : this.o.toServer;
    const toReceiver = direction === "client_to_server" ? this.o.toServer : this.o.toClient;
    if (judged.length === 0) {
      const id = leadingId(b);
      if (direction === "client_to_server" && id !== null) {
        correlator.answer(this.o.server, this.o.session, direction, id);
        toSender(jsonLine(droppedError(id, reason)));
      }
      return;
    }
    const done = new Set<string>();
    for (const { event: e } of judged) {
      if (e.id === null || e.id === undefined) continue;
      const key = `${e.kind === "request" ? "ask" : "answer"}:${idKey(e.id)}`;
      if (done.has(key)) continue;
      done.add(key);
      if (e.kind === "request") {
        correlator.answer(this.o.server, this.o.session, direction, e.id);
        toSender(jsonLine(droppedError(e.id, reason)));
      } else if ((e.kind === "response" || e.kind === "error") && e.answered) toReceiver(jsonLine(droppedError(e.id, reason)));
    }
  }

  private onLine(direction: Direction, content: Buffer, raw: Buffer, forwardJudged: Forward, edited = false): void {
    const reading = readLine(content);
    // Blank lines carry no message and are not recorded: monitor mode passes them on with the rest, enforce
    // mode drops them (nothing unrecorded reaches a peer).
    if (reading.blank) {
      if (!this.enforcing && this.byLine) forwardJudged(raw);
      return;
    }
    const enforcing = this.enforcing;
    // Enforce mode refuses a line its readers disagree on, unless escaping makes them agree (then it forwards
    // that); monitor mode records the doubt when a reader reads what the record would not show.
    const doubt = enforcing ? (reading.canonical ? undefined : reading.doubt) : reading.recordDoubt;
    const problem = reading.problem ?? (reading.values.length === 0 ? "line is not JSON" : undefined);
    const judged: Judged[] = [];
    const forward = (b: Buffer): void => forwardJudged(b, judged);
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
    // A line with a message `--intercept` selects: what would go out waits for a person (an edit is not held again).
    if (!edited && this.o.intercept?.matches(judged)) {
      const out: Buffer[] = [];
      this.send(direction, judged, reading, raw, problem, doubt, single, (b) => void out.push(b));
      if (out.length > 0) this.holdLine(direction, judged, out);
      return;
    }
    this.send(direction, judged, reading, raw, problem, doubt, single, forward);
  }

  /** What a judged line puts on the wire: monitor mode the line as read, enforce mode what the policy lets through. */
  private send(direction: Direction, judged: Judged[], reading: LineReading, raw: Buffer, problem: string | undefined, doubt: string | undefined, single: ReturnType<typeof splitBatch> | null, forward: (b: Buffer) => void): void {
    if (!this.o.enforce) {
      if (this.byLine) forward(raw);
      return;
    }
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

  /**
   * Holds what a line would put on the wire in its place of the output. Forwarded: those bytes go out. Edited:
   * the edit is read, judged and recorded as a line of its own, and what that puts on the wire goes out in the
   * held line's place. Dropped or timed out: the requests in it are answered with error -32054.
   */
  private holdLine(direction: Direction, judged: Judged[], out: Buffer[]): void {
    const slot = this.outputs![direction].reserve();
    const message = heldMessage(out, judged);
    void this.o.intercept!.hold({ flow: this.o.session, peer: `${direction === "client_to_server" ? "client" : "server"} ${this.o.server}`, server: this.o.server, session: this.o.session, transport: "stdio" }, judged, message)
      .then((release) => {
        if (release.send === "original") {
          for (const b of out) slot.send(b);
          return;
        }
        const requests = judged.map((j) => j.event).filter((e) => e.kind === "request" && e.id !== null && e.id !== undefined);
        for (const r of requests) this.o.pipeline.tracker.correlator.answer(this.o.server, this.o.session, r.direction, r.id!);
        if (release.send === "nothing") {
          const toRequester = direction === "client_to_server" ? this.o.toClient : this.o.toServer;
          for (const r of requests) toRequester(jsonLine(droppedError(r.id!, release.reason)));
          // A dropped answer: whoever waits for it gets the error in its place rather than silence.
          const answers = judged.map((j) => j.event).filter((e) => (e.kind === "response" || e.kind === "error") && e.id !== null && e.id !== undefined);
          for (const a of answers) slot.send(jsonLine(droppedError(a.id!, release.reason)));
          return;
        }
        // An edited answer answers the request its original took.
        for (const j of judged) if (j.event.answered) this.o.pipeline.tracker.correlator.add(j.event.answered);
        const line = jsonLine(release.message);
        this.onLine(direction, line.subarray(0, line.length - 1), line, (b) => slot.send(b), true);
      })
      .catch((err: unknown) => this.o.onError(err, direction))
      .finally(() => slot.close());
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

/** Sends a line on to its peer; `judged`: what it was judged to carry, for the answers owed should it not go. */
type Forward = (b: Buffer, judged?: readonly Judged[]) => void;

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

/** The message a held line would carry, as its peer reads it: the bytes that would go out, else what was judged. */
function heldMessage(out: readonly Buffer[], judged: readonly Judged[]): unknown {
  try {
    return JSON.parse(Buffer.concat(out).toString("utf8")) as unknown;
  } catch {
    const raws = judged.map((j) => j.event.raw).filter((r) => r !== undefined);
    return raws.length === 1 ? raws[0] : raws;
  }
}
