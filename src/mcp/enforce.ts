import { charsetDoubt, charsetsOf, DEFAULT_MAX_STREAM_BYTES, parseContentEncoding, readStream, type BodyDecoderMode, type BodyDecoderTap } from "../body/index.js";
import type { Exchange, RequestHold, RequestVerdict } from "../proxy/exchange.js";
import { headerValue } from "../proxy/headers.js";
import { DROPPED_EVENT, isEnforcedDeny, policyError, replacementForServerMessage, sseEvent } from "./replies.js";
import type { McpFlow } from "./flow.js";
import { allJudged, type Judged, type Judgement } from "./rpc-event.js";
import type { PendingRequest } from "./correlator.js";
import type { MessageHandler } from "./tracker.js";
import type { InspectBudget } from "../budget/inspect-budget.js";
import { peerKey } from "../proxy/peer-key.js";

const NO_ROOM = "the inspection memory budget (--max-inspect-memory) or this peer's share of it is spent";

export interface EnforceOptions {
  maxInspectBytes: number;
  /** What held requests, responses and events are charged to (by peer); none: nothing is charged. */
  budget?: InspectBudget;
  removeDeniedTools: boolean;
}

/**
 * Enforce mode asks for unencoded bodies, so that a denied message can be replaced in place; monitor mode
 * never touches a header.
 */
export function stripContentCoding(ex: Exchange): void {
  const accept = headerValue(ex.request.headers["accept"]) ?? "";
  const mayCarryMcp = ex.request.method === "POST" || /event-stream|json/i.test(accept);
  if (mayCarryMcp && ex.request.headers["accept-encoding"] !== undefined) ex.replaceRequestHeader("accept-encoding", "identity");
}

/**
 * The hold of the client's body until its messages are judged (the caller installs it). A denied request never
 * reaches the upstream: the client gets a policy error in the form it reads responses in.
 */
export function enforceRequest(pipeline: MessageHandler, flow: McpFlow, opts: EnforceOptions, sniffed = false): RequestHold {
  const start = sniffed ? watchBodyStart(flow.ex) : null;
  return {
    maxBytes: opts.maxInspectBytes,
    ...(opts.budget ? { charge: opts.budget.charge(peerKey(flow.ex, "client_to_server")) } : {}),
    decide: async (body, why): Promise<RequestVerdict> => {
      // A large body under a non-JSON content type, on an exchange with no MCP header, that cannot be JSON (its
      // first byte after any whitespace is not a brace, a bracket or a byte order mark, and it is not
      // content-coded) is not MCP: it passes. Anything else a lenient server might parse is refused below.
      if (body === null && start?.notJson() && !flow.hinted) return { action: "forward" };
      if (body === null && why === "over_budget") {
        return respond(503, "text/plain; charset=utf-8", `mcp-wiretap: request not judged, not forwarded: ${NO_ROOM}; retry later\n`);
      }
      if (body === null) {
        return respond(413, "text/plain; charset=utf-8", `mcp-wiretap: request larger than --max-inspect-bytes cannot be judged in enforce mode\n`);
      }
      let events = await flow.requestJudgements;
      if (events.length === 0 && flow.isMcp && /\S/.test(body.toString("latin1"))) {
        events = [await unjudged(pipeline, flow, "client_to_server", "request body of an MCP exchange, but no message of it was judged: not forwarded")];
      } else if (events.length === 0 && sniffed && mayHoldCall(body)) {
        // Strict JSON read nothing, but a lenient reader may (a prefix it skips: `\v`, NBSP, a comment, `)]}'`).
        events = [await unjudged(pipeline, flow, "client_to_server", "request body under a non-JSON content type that a lenient reader may read as a call: not forwarded")];
      }
      const denied = events.filter(isEnforcedDeny);
      if (denied.length === 0) return { action: "forward" };
      const requests = events.filter(({ event: e }) => e.kind === "request" && e.id !== null && e.id !== undefined);
      // A body no reading makes a message of, that its receiver may still read: refused whole, with an id-less error.
      const unreadable = denied.find((j) => j.event.kind === "invalid");
      if (requests.length > 0 || unreadable || denied.some((j) => j.event.kind === "notification")) {
        // The whole body is refused: one denied message blocks its batch.
        for (const { event: r } of requests) pipeline.tracker.correlator.answer(r.server, flow.scope, r.direction, r.id!);
        const errors = requests.map((r) => policyError(r.event.id!, r.decision.enforced ? r.decision : denied[0]!.decision));
        if (unreadable && errors.length === 0) errors.push(policyError(unreadable.event.id ?? null, unreadable.decision));
        return answerClient(flow, errors, events.some((j) => j.event.batch !== undefined));
      }
      // The replacement is plain UTF-8 JSON, whatever the client's body was labelled.
      flow.ex.replaceRequestHeader("content-encoding", "identity");
      flow.ex.replaceRequestHeader("content-type", "application/json");
      return { action: "forward", body: Buffer.from(JSON.stringify(replaceClientResponses(events))) };
    },
  };
}

/** JSON text may start with whitespace; a body that is padding so far, or starts `{`, `[` or a BOM, may be JSON. */
const JSON_WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
/**
 * What a body that cannot be JSON to any reader starts with: a word (a form field, a text) or `%`. Anything
 * else may be skipped by a lenient reader before the JSON it holds (a control or Unicode space that `trim()`
 * and Python's `strip()` remove, a comment, an XSSI guard `)]}'`, a byte order mark, a number a stream decoder
 * reads first), and so is refused when it cannot be judged. A JSON literal (`true`, `NaN`) is no word.
 */
const STARTS_LITERAL = /^(?:true|false|null|NaN|Infinity)(?![A-Za-z0-9_])/;

/** A body strict JSON does not read may still hold a call for a lenient reader: an object and a method (or an escape hiding one). */
function mayHoldCall(body: Buffer): boolean {
  const text = body.toString("latin1").replaceAll("\0", "");
  return text.includes("{") && /method|\\u/i.test(text);
}

function watchBodyStart(ex: Exchange): { notJson(): boolean } {
  /** The body's first bytes after JSON whitespace (enough to tell a word from a JSON literal). */
  let start = "";
  const coded = ex.request.headers["content-encoding"] !== undefined && !/^\s*(identity)?\s*$/i.test(String(ex.request.headers["content-encoding"]));
  ex.tapRequest({
    data(chunk) {
      for (let i = 0; i < chunk.length && start.length < 16; i++) {
        if (start.length === 0 && JSON_WHITESPACE.has(chunk[i]!)) continue;
        start += String.fromCharCode(chunk[i]!);
      }
    },
    end() {},
  });
  return { notJson: () => !coded && start.length > 0 && /^[%A-Za-z]/.test(start) && !STARTS_LITERAL.test(start) };
}

/** Makes a decoder of the response body; `take` gets what each of its messages was judged. */
export type ResponseDecoder = (take: (judged: Judgement[]) => void) => BodyDecoderTap;

/**
 * Rewrites the server's JSON or event-stream response so that denied messages are replaced or dropped.
 * A replaced JSON body, and every event stream the server content-coded, go to the client as identity: what
 * the client reads is what was judged (an event stream's coding is undone here, before its events are
 * framed and judged, the way a lenient client undoes it: see body/stream-reading). The rewriter acts on the
 * judgements each body or event returns; one of an MCP exchange that returns none is not passed on.
 */
export function enforceResponse(pipeline: MessageHandler, flow: McpFlow, mode: BodyDecoderMode, decoder: ResponseDecoder, opts: EnforceOptions, hold?: { whole: ResponseHold; event: EventHold }): void {
  if (mode === "json") return enforceWholeResponse(pipeline, flow, decoder, opts, hold?.whole);
  if (mode === "sse") enforceEventResponse(pipeline, flow, decoder, opts, hold?.event);
}

/** `--intercept` on a judged JSON response: `out` what would go out instead (null: the body); returns what goes out instead. */
export type ResponseHold = (events: Judged[], out: Buffer | null) => Promise<Buffer | null>;
/** `--intercept` on a judged event (`out`: what would go out for it); a promise holds the stream. */
export type EventHold = (events: Judged[], out: Buffer) => Buffer | Promise<Buffer>;

function enforceWholeResponse(pipeline: MessageHandler, flow: McpFlow, decoder: ResponseDecoder, opts: EnforceOptions, hold?: ResponseHold): void {
  // The body is judged when the rewriter has it whole (its content coding undone by the exchange's
  // decoded-body source, whose tap has ended by then); the exchange's end waits for that judgement.
  flow.ex.rewriteResponse({
    kind: "whole",
    maxBytes: opts.maxInspectBytes,
    ...(opts.budget ? { charge: opts.budget.charge(peerKey(flow.ex, "server_to_client")) } : {}),
    rewrite: async (body, why) => {
      if (body === null) {
        // Not MCP (a large JSON download through the proxy): passed on as it is.
        if (!flow.isMcp) return null;
        // An MCP answer too large to judge is not passed on: the requests it answers get the error instead.
        const reason = why === "over_budget" ? `response not inspected: ${NO_ROOM}; not passed on (enforce mode cannot judge it)` : "response larger than --max-inspect-bytes: not passed on (enforce mode cannot judge it)";
        return answerUnread(pipeline, flow, await unjudged(pipeline, flow, "server_to_client", reason));
      }
      const judgement = judgeBody(decoder, body);
      flow.decoding.push(judgement.then(() => {}));
      const events = await judgement;
      if (events.length === 0 && flow.isMcp && /\S/.test(body.toString("latin1"))) {
        return answerUnread(pipeline, flow, await unjudged(pipeline, flow, "server_to_client", "response body of an MCP exchange, but no message of it was judged: not passed on"));
      }
      if (!events.some(isEnforcedDeny)) return hold ? hold(events, null) : null;
      if (events.every((j) => j.event.kind === "invalid")) return answerUnread(pipeline, flow, events.find(isEnforcedDeny)!);
      const out = events.map((j) => (isEnforcedDeny(j) ? replacementForServerMessage(j, opts.removeDeniedTools) : j.event.raw)).filter((m) => m !== null);
      const batch = events.some((j) => j.event.batch !== undefined);
      const replaced = Buffer.from(batch ? JSON.stringify(out) : out.length > 0 ? JSON.stringify(out[0]) : "");
      return hold ? hold(events, replaced) : replaced;
    },
  });
}

/**
 * An answer to an MCP POST (or a session's GET stream) under a content type the proxy reads neither as JSON
 * nor as an event stream, that a client testing the type by its prefix (`application/jsonx`,
 * `text/event-streamx`: the Python SDK, httpx-sse) still reads. Its body is not passed on: the requests it
 * answers get the error instead.
 */
export function refuseUnreadResponse(pipeline: MessageHandler, flow: McpFlow, opts: EnforceOptions, why: string, now = false): void {
  flow.ex.rewriteResponse({
    kind: "whole",
    maxBytes: opts.maxInspectBytes,
    ...(opts.budget ? { charge: opts.budget.charge(peerKey(flow.ex, "server_to_client")) } : {}),
    // An event stream is refused on its head: it may never end, and its client would wait for nothing.
    now,
    rewrite: async (body) => {
      if (body !== null && !/\S/.test(body.toString("latin1"))) return null;
      flow.refusedResponse = true;
      return answerUnread(pipeline, flow, await unjudged(pipeline, flow, "server_to_client", why));
    },
  });
}

/** Decodes one whole body with a decoder of its own and returns every judgement made of it. */
export async function judgeBody(decoder: ResponseDecoder, body: Buffer): Promise<Judged[]> {
  const judged: Judgement[] = [];
  const tap = decoder((j) => judged.push(...j));
  tap.data(body);
  tap.end();
  await tap.done;
  return allJudged(judged);
}

/**
 * A body the proxy made no judgement of is recorded as such, to be refused (in enforce mode that record is
 * always an enforced denial); when not even that could be recorded, this throws, and the client gets a 500
 * (a held request) or a 502 (a response).
 */
async function unjudged(pipeline: MessageHandler, flow: McpFlow, direction: "client_to_server" | "server_to_client", reason: string): Promise<Judged> {
  const judged = await pipeline.invalid(flow.context(direction), reason, 0);
  if (!isEnforcedDeny(judged)) throw new Error(`not denied: ${reason}`);
  return judged;
}

function enforceEventResponse(pipeline: MessageHandler, flow: McpFlow, decoder: ResponseDecoder, opts: EnforceOptions, hold?: EventHold): void {
  const ex = flow.ex;
  // Events are judged one at a time, in order, as the rewriter frames them: each call gets its own judgements.
  let take: ((judged: Judgement[]) => void) | null = null;
  const tap = decoder((j) => take?.(j));
  // The decoder is fed by the rewriter, not by a tap: this one only ends it (or passes on an aborted body).
  ex.tapResponse({ data() {}, end: () => tap.end(), abort: (r) => (tap.abort ? tap.abort(r) : tap.end()) });
  /** `doubt`: why a client may read the event otherwise; each message of it is judged with it (rule `unreadable`). */
  const judge = (piece: Buffer, doubt: string | null): Judgement[] => {
    const judged: Judgement[] = [];
    take = (j) => judged.push(...j);
    flow.eventDoubt = doubt;
    try {
      tap.data(piece);
    } finally {
      take = null;
      flow.eventDoubt = null;
    }
    if (judged.length === 0 && flow.isMcp && carriesMessage(piece)) {
      const readability = doubt !== null ? { readability: { reason: doubt, alternates: [] } } : {};
      judged.push(pipeline.invalid(flow.context("server_to_client", readability), "event of an MCP stream, but no message of it was judged: not passed on", piece.length));
    }
    return judged;
  };
  const coding = ex.response!.headers["content-encoding"];
  const parsed = parseContentEncoding(coding);
  const coded = coding !== undefined && !(parsed.ok && parsed.codings.length === 0);
  const charsets = charsetsOf(ex.response!.headers["content-type"]);
  let oversizedDenial: Judgement | null = null;
  const recordOversized = (why: "too_large" | "over_budget" = "too_large"): Judgement =>
    pipeline.invalid(flow.context("server_to_client"), why === "over_budget" ? `event not inspected: ${NO_ROOM}; not passed on (enforce mode cannot judge it)` : "event larger than --max-inspect-bytes: not passed on (enforce mode cannot judge it)", 0);
  // The requests this stream answers: those of its own exchange, and on a legacy HTTP+SSE stream those POSTed
  // to its endpoint (answered here, never on their own exchange).
  const answeredHere = (p: PendingRequest): boolean =>
    p.direction === "client_to_server" && (p.flow === ex.id || (flow.legacy?.streamFlow === ex.id && pipeline.tracker.legacy.lookup(p.server, p.path)?.streamFlow === ex.id));
  /** The requests still unanswered get the error in place of the dropped event (it may have been their answer). */
  const answerOversized = (denial: Judgement): Buffer | Promise<Buffer> => {
    const pending = pipeline.tracker.correlator.drain(answeredHere);
    const errors = ({ decision }: Judged): Buffer => (pending.length === 0 ? DROPPED_EVENT : Buffer.concat(pending.map((p) => sseEvent(policyError(p.id, decision)))));
    return denial instanceof Promise ? denial.then(errors) : errors(denial);
  };
  flow.injector = ex.rewriteResponse({
    kind: "events",
    maxEventBytes: opts.maxInspectBytes,
    ...(opts.budget ? { charge: opts.budget.charge(peerKey(ex, "server_to_client")) } : {}),
    event: (received) => {
      // A client that decodes the stream with its labelled charset, or breaks lines at more characters than CR
      // and LF, may read another event than the proxy does. U+2028, U+2029 and NEL only inside the JSON of
      // `data:` lines are escaped (the same JSON to every reader); any other such event is judged with the doubt
      // before anything is recorded of it: its messages are denied as unreadable (a response becomes -32052, a
      // notification or request is dropped), and an event of no message is dropped.
      const found = charsetDoubt(received, charsets) ?? hiddenLineBreak(received);
      const escaped = found !== null ? escapedLineBreaks(received, charsets) : null;
      const raw = escaped ?? received;
      // Escaping (or closing a tail) can take an event past what the decoder reads: too large to judge, then.
      if (raw.length > opts.maxInspectBytes) return answerOversized(recordOversized());
      const doubt = escaped === null ? found : null;
      // An event with a message waiting for shared state holds the stream behind it (see response-writer).
      const judged = allJudged(judge(raw, doubt));
      return judged instanceof Promise ? judged.then((events) => sendable(raw, doubt, events)) : sendable(raw, doubt, judged);
    },
    // An event too large to judge is not passed on; the requests of this exchange still unanswered get the error
    // (the event may have been their answer), recorded with the event's own denial.
    oversized: (why) => void (oversizedDenial = recordOversized(why)),
    oversizedEnd: () => {
      const denial = oversizedDenial;
      oversizedDenial = null;
      return denial === null ? Buffer.alloc(0) : answerOversized(denial);
    },
    ...(coded
      ? {
          decode: (out: { data(chunk: Buffer): void; end(): void }) =>
            readStream({
              contentEncoding: coding,
              maxBytes: DEFAULT_MAX_STREAM_BYTES,
              retainBytes: opts.maxInspectBytes,
              onData: (chunk) => out.data(chunk),
              onProblem: (p) => void pipeline.invalid(flow.context("server_to_client"), `${p.code}: ${p.message}; the rest of the stream was not sent`, 0),
              onDoubt: (reason) => (flow.streamAmbiguity = reason),
              onEnd: () => out.end(),
            }),
        }
      : {}),
  });

  /** What goes to the client for one judged event: itself, its denied messages replaced, or nothing. */
  function sendable(raw: Buffer, doubt: string | null, events: Judged[]): Buffer | Promise<Buffer> {
    // On every stream: one not yet known to be MCP (a legacy GET before its endpoint event) may still carry
    // messages a client reads, and the doubt is what hides them from the proxy.
    if (doubt !== null) {
      // Every message judged with the doubt is denied; anything else of the event (none judged) is not passed on.
      if (events.length === 0 || !events.every(isEnforcedDeny)) {
        if (events.length === 0) pipeline.invalid(flow.context("server_to_client", { readability: { reason: doubt, alternates: [] } }), "event that a client may read otherwise than the proxy: not passed on", raw.length);
        return DROPPED_EVENT;
      }
    }
    // What was judged is what goes on: the escaped event when its line breaks were escaped.
    if (!events.some(isEnforcedDeny)) return hold ? hold(events, raw) : raw;
    const replaced = events.map((j) => (isEnforcedDeny(j) ? replacementForServerMessage(j, opts.removeDeniedTools) : j.event.raw)).filter((m) => m !== null);
    if (replaced.length === 0) return DROPPED_EVENT;
    const id = events[0]?.event.sseEventId;
    const out = sseEvent(replaced.length === 1 ? replaced[0] : replaced, id);
    return hold ? hold(events, out) : out;
  }
}

/** Characters Python's str.splitlines() breaks lines at besides CR and LF (httpx reads a stream's lines so). */
const OTHER_LINE_BREAKS = /[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/**
 * Why an event may read otherwise to a client that splits lines as httpx does (httpx-sse 0.4.0: the MCP
 * Python SDK's client allows it): a comment or an event name can hide a `data:` line from the proxy, a JSON
 * string another event. Null when the event has none of those characters.
 */
function hiddenLineBreak(raw: Buffer): string | null {
  const found = OTHER_LINE_BREAKS.exec(raw.toString("utf8"));
  if (found === null) return null;
  return `the event holds U+${found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}, a line break to readers that split lines as Python's str.splitlines() does (httpx)`;
}

/** U+2028, U+2029 and NEL: breaks to httpx, yet legal unescaped inside a JSON string (and nowhere else in JSON). */
const JSON_STRING_BREAK = /[\x85\u2028\u2029]/;
const JSON_STRING_BREAKS = new RegExp(JSON_STRING_BREAK.source, "g");

/**
 * The event with each U+2028, U+2029 and NEL written as a JSON escape, when that is the same event to every
 * reader: the characters stand only in `data:` lines whose joined data is one JSON text (so each is inside a
 * string, the only place JSON allows them), the event is valid UTF-8 with no other doubt, and its charset
 * label reads it as UTF-8. Null otherwise (the event is then judged as unreadable).
 */
function escapedLineBreaks(raw: Buffer, charsets: readonly string[]): Buffer | null {
  const text = raw.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(raw) || /[\x0b\x0c\x1c\x1d\x1e]/.test(text)) return null;
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.some((l) => JSON_STRING_BREAK.test(l) && !l.startsWith("data:"))) return null;
  const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
  try {
    JSON.parse(data);
  } catch {
    return null;
  }
  const out = Buffer.from(text.replace(JSON_STRING_BREAKS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`), "utf8");
  return charsetDoubt(out, charsets) === null && hiddenLineBreak(out) === null ? out : null;
}

/**
 * One framed event that carries data a message is read from: anything but an empty event, a comment, an
 * id or retry alone, or a legacy `endpoint` event's URL.
 */
function carriesMessage(raw: Buffer): boolean {
  const lines = raw.toString("utf8").split(/\r\n|\r|\n/);
  const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
  if (data === "") return false;
  const endpoint = lines.some((l) => /^event: ?endpoint$/.test(l));
  return !endpoint || /^\s*[[{]/.test(data);
}

/**
 * A response no reading made a message of, that the client may yet read one from (a coding only it knows):
 * each request of the exchange is answered with the error instead.
 */
async function answerUnread(pipeline: MessageHandler, flow: McpFlow, unread: Judged): Promise<Buffer> {
  const requests = (await flow.requestJudgements).map((j) => j.event).filter((e) => e.kind === "request" && e.id !== null && e.id !== undefined);
  for (const r of requests) pipeline.tracker.correlator.answer(r.server, flow.scope, r.direction, r.id!);
  const errors = requests.map((r) => policyError(r.id!, unread.decision));
  if (errors.length === 0) return Buffer.alloc(0);
  return Buffer.from(JSON.stringify(requests.some((r) => r.batch !== undefined) ? errors : errors[0]));
}

/** The client's own responses (to server requests) that were denied become errors for the server. */
function replaceClientResponses(events: Judged[]): unknown {
  const out = events.map((j) => (isEnforcedDeny(j) ? policyError(j.event.id ?? null, j.decision) : j.event.raw));
  return events.some((j) => j.event.batch !== undefined) ? out : out[0];
}

export function answerClient(flow: McpFlow, errors: Record<string, unknown>[], batch: boolean): RequestVerdict {
  if (errors.length === 0) return respond(202, undefined, "");
  if (flow.legacy) {
    // Legacy transport: the POST is only acknowledged; answers travel on the session's GET stream.
    for (const e of errors) flow.legacy.inject?.(sseEvent(e));
    return respond(202, undefined, "");
  }
  const message = batch ? errors : errors[0];
  const accept = headerValue(flow.ex.request.headers["accept"]) ?? "";
  if (!/application\/json|\*\/\*/i.test(accept) && /text\/event-stream/i.test(accept)) {
    return respond(200, "text/event-stream", sseEvent(message).toString());
  }
  return respond(200, "application/json", JSON.stringify(message));
}

function respond(status: number, contentType: string | undefined, body: string): RequestVerdict {
  const headers: Record<string, string> = contentType ? { "content-type": contentType } : {};
  return { action: "respond", response: { status, headers, body: Buffer.from(body) } };
}
