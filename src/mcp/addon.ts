import { duplicateMemberDoubt } from "../body/duplicate-members.js";
import { leadingValue } from "../body/leading-value.js";
import { bodyModeFor, charsetsOf, createBodyDecoder, keepsAscii, maxDepth, parseContentEncoding, parseJsonText, type BodyMessage, type BodyProblem, type DecodedBytes } from "../body/index.js";
import type { InspectBudget } from "../budget/inspect-budget.js";
import { peerKey } from "../proxy/peer-key.js";
import { GrowingBuffer } from "../budget/growing-buffer.js";
import { decodedBody } from "../proxy/decoded-body.js";
import type { Addon, Exchange } from "../proxy/exchange.js";
import { interceptMonitoredResponse, type InterceptHooks } from "./intercept-hooks.js";
import { headerLines, headerValue } from "../proxy/headers.js";
import { formatTarget } from "../proxy/target.js";
import type { Direction } from "./correlator.js";
import { splitBatch } from "./jsonrpc.js";
import { enforceRequest, enforceResponse, judgeBody, refuseUnreadResponse, stripContentCoding, type EnforceOptions } from "./enforce.js";

import { McpFlow } from "./flow.js";
import { refusalOf, responseHead } from "./response-refusals.js";
import { allJudged, type Judged, type Judgement, type MessageContext } from "./rpc-event.js";
import { headerMismatches } from "./stateless-headers.js";
import type { McpTracker, MessageHandler } from "./tracker.js";
import { runEach } from "../util/run-each.js";
import { isPlainObject } from "../util/plain-object.js";

/** A body its receiver may read otherwise: why, and its other readings that parse. */
interface Readings {
  reason: string;
  alternates: unknown[];
}

export interface McpAddonOptions {
  maxInspectBytes: number;
  /** The memory bodies and events may hold while inspected, shared out by peer; none: unbounded but per body. */
  budget?: InspectBudget;
  maxJsonDepth?: number;
  /** Enforce mode: hold requests and rewrite responses so that denied messages never reach their peer. */
  enforce?: EnforceOptions;
  /** `--intercept`: request and JSON response bodies with a message it selects wait for a person before they go on. */
  intercept?: InterceptHooks;
}

/**
 * Decodes the bodies of every exchange that carries MCP (beside forwarding, from copies) and hands each
 * JSON-RPC message to the pipeline, which returns its decision (enforce mode acts on it).
 */
export function mcpAddon(pipeline: MessageHandler, opts: McpAddonOptions): Addon {
  const tracker = pipeline.tracker;
  const depthLimit = opts.maxJsonDepth ?? 256;
  /** Each reader returns what it judged: the caller decides what the decisions mean (see enforce.ts). */
  const deliver = (flow: McpFlow, direction: Direction, value: unknown, bytes: number, extra: Partial<MessageContext> = {}, readings?: Readings): Judgement[] => {
    const { batch, messages } = splitBatch(value);
    const headerDoubt = direction === "client_to_server" ? flow.requestHeaderDoubt : null;
    if (headerDoubt !== null) readings = { reason: [readings?.reason, headerDoubt].filter((r) => r !== undefined).join("; "), alternates: readings?.alternates ?? [] };
    // A request without `jsonrpc` (or a batch nested in a batch) is still a call to a lenient server.
    const mayBeRpc = (m: unknown): boolean => looksLikeJsonRpc(m) || (direction === "client_to_server" && (hasMethod(m) || (batch && Array.isArray(m))));
    if (!flow.isMcp && !messages.some(mayBeRpc)) return [];
    flow.isMcp = true;
    if (flow.unrecordedRequestProblem !== null) {
      // The request came first: its record too (already forwarded, so nothing is decided by it now).
      pipeline.invalid(flow.context("client_to_server"), flow.unrecordedRequestProblem.why, flow.unrecordedRequestProblem.bytes);
      flow.unrecordedRequestProblem = null;
    }
    const alternates = readings ? readings.alternates.map((v) => splitBatch(v).messages) : [];
    return messages.map((message, index) => {
      const size = batch ? Buffer.byteLength(JSON.stringify(message) ?? "") : bytes;
      const more: Partial<MessageContext> = { ...extra };
      if (batch) more.batch = { index, size: messages.length };
      if (readings) {
        // Another reading of the same shape pairs message by message; otherwise all of it weighs on each one.
        more.readability = { reason: readings.reason, alternates: alternates.flatMap((m) => (m.length === messages.length ? [m[index]] : m)) };
      }
      if (direction === "client_to_server") {
        const mismatch = headerMismatches(flow.ex.request.headers, message);
        if (mismatch) more.headerMismatch = mismatch;
      }
      return pipeline.message(flow.context(direction, more), message, size);
    });
  };

  const problem = (flow: McpFlow, direction: Direction, p: BodyProblem): Judgement[] => {
    if (p.code === "empty_body") return [];
    // A JSON body no reading makes JSON of, labelled so that its receiver may read it otherwise: a request like
    // that is recorded (and refused in enforce mode) even before the exchange is known to be MCP.
    // A stage that threw while judging a message (decoder_failed) leaves it unjudged: unreadable too.
    const eventDoubt = direction === "server_to_client" ? flow.eventDoubt : null;
    const doubts = [p.ambiguity, eventDoubt, direction === "client_to_server" ? flow.requestHeaderDoubt : null, p.code === "decoder_failed" ? `internal error while judging it (${p.message})` : null];
    const doubt = doubts.filter((d) => d !== null && d !== undefined).join("; ") || undefined;
    const unreadable = doubt !== undefined && (flow.isMcp || direction === "client_to_server");
    // Enforce mode judges (and so refuses) a request body it cannot read even before the exchange is known
    // to be MCP, unless the body was only sniffed (a form or text post that no header says is MCP).
    const refusable = opts.enforce !== undefined && direction === "client_to_server" && (flow.sniffedType === null || flow.hinted);
    const sniffed = direction === "client_to_server" ? flow.sniffedType : null;
    const why = sniffed !== null ? `request body is not JSON (content-type: ${sniffed}): ${p.message}` : `${p.code}: ${p.message}`;
    if (!flow.isMcp && !unreadable && !refusable) {
      // A JSON request (not merely sniffed) may still be MCP: its answer will say (see deliver).
      if (direction === "client_to_server" && sniffed === null) flow.unrecordedRequestProblem = { why, bytes: p.bytes ?? 0 };
      return [];
    }
    const extra: Partial<MessageContext> = unreadable ? { readability: { reason: doubt, alternates: [] } } : {};
    return [pipeline.invalid(flow.context(direction, extra), why, p.bytes ?? 0)];
  };

  const onSse = (flow: McpFlow, m: BodyMessage): Judgement[] => {
    if (m.kind === "sse_meta") {
      if (m.id) flow.resumable = true;
      return [];
    }
    if (m.kind !== "sse") return [];
    const event = m.event;
    if (event.id) flow.resumable = true;
    // An endpoint's data is a URL; JSON under that name is read as a message by a reader that ignores event names.
    if (event.event === "endpoint" && !/^\s*[[{]/.test(event.data)) {
      const base = new URL(`${flow.ex.server.secure ? "https" : "http"}://${flow.server}${flow.ex.request.path}`);
      const legacy = tracker.legacy.register(event.data, base, flow.ex.id, flow.server);
      if (legacy) {
        if (flow.injector) legacy.inject = flow.injector.inject;
        flow.legacy = legacy;
        flow.transport = "http+sse";
        flow.session = legacy.endpointPath;
        flow.isMcp = true;
      }
      return [];
    }
    if (event.data === "") return [];
    const bytes = Buffer.byteLength(event.data);
    const extra = event.id ? { sseEventId: event.id } : {};
    const doubts = [flow.streamAmbiguity, flow.eventDoubt, m.ambiguity];
    // An event with bytes that are not UTF-8 reads with them replaced (the lenient reading) or dropped.
    const texts = event.invalidUtf8 ? [event.data, event.data.replaceAll("\ufffd", "")] : [event.data];
    const values: unknown[] = [];
    let why = "";
    for (const text of texts) {
      let parsed = parseJsonText(text);
      const leading = parsed.ok || parsed.code === "json_too_many_values" ? null : leadingValue(text);
      if (leading) {
        parsed = leading.parsed;
        doubts.push(leading.doubt.replace("the body", "the event"));
      }
      if (!parsed.ok) why ||= parsed.code === "json_too_many_values" ? `SSE event data: ${parsed.error}` : `SSE event data is not JSON: ${parsed.error}`;
      else if (maxDepth(parsed.value, depthLimit) > depthLimit) why ||= `JSON nests deeper than ${depthLimit} levels`;
      else {
        values.push(parsed.value);
        // The event's own text was scanned by the decoder (its doubt is in m.ambiguity): only another reading is.
        if (text !== event.data) doubts.push(duplicateMemberDoubt(text));
      }
    }
    const reason = [...new Set(doubts.filter((d) => d !== null && d !== undefined))].join("; ");
    if (values.length === 0) {
      if (!flow.isMcp) return [];
      return [pipeline.invalid(flow.context("server_to_client", { ...extra, ...(reason ? { readability: { reason, alternates: [] } } : {}) }), why, bytes)];
    }
    return deliver(flow, "server_to_client", values[0], bytes, extra, reason ? { reason, alternates: values.slice(1) } : undefined);
  };

  /** A decoder of one body; `take` gets what each of its messages (or problems) was judged. */
  const decoder = (flow: McpFlow, direction: Direction, headers: Exchange["request"]["headers"], take: (judged: Judgement[]) => void = () => {}, decoded = decodedOnce(flow.ex, direction, headers, opts.maxInspectBytes)) => {
    const tap = createBodyDecoder({
      ...(decoded ? { decoded } : {}),
      contentType: headers["content-type"],
      contentEncoding: headers["content-encoding"],
      maxInspectBytes: opts.maxInspectBytes,
      maxEventBytes: opts.maxInspectBytes,
      maxJsonDepth: depthLimit,
      ...(opts.budget ? { charge: opts.budget.forPeer(peerKey(flow.ex, direction)) } : {}),
      onMessage: (m) => {
        if (m.kind !== "json") return take(onSse(flow, m));
        take(deliver(flow, direction, m.value, m.bytes, {}, m.ambiguity !== undefined ? { reason: m.ambiguity, alternates: m.alternates ?? [] } : undefined));
      },
      onProblem: (p) => take(problem(flow, direction, p)),
    });
    flow.decoding.push(tap.done);
    return tap;
  };
  // Enforce mode acts on what decoding the client's body returns, before forwarding it.
  const requestDecoder = (flow: McpFlow, headers: Exchange["request"]["headers"]) => {
    if (!opts.enforce && !opts.intercept) return decoder(flow, "client_to_server", headers);
    const judged: Judgement[] = [];
    const tap = decoder(flow, "client_to_server", headers, (j) => judged.push(...j));
    // A message waiting for shared state holds the body (and only it) until its judgement comes.
    flow.requestJudgements = tap.done.then(() => allJudged(judged));
    return tap;
  };

  /** How a person's edit of a held message is judged: as a JSON body of its direction, by a decoder of its own. */
  const editedJudge =
    (flow: McpFlow, direction: "client_to_server" | "server_to_client") =>
    (body: Buffer): Promise<Judged[]> =>
      judgeBody((take) => decoder(flow, direction, { "content-type": "application/json" }, take, undefined), body);

  /** Enforce mode holds the body until it is judged; `--intercept` until a person releases what it selects. */
  const holdRequest = (flow: McpFlow, sniffed: boolean): void => {
    const enforced = opts.enforce ? enforceRequest(pipeline, flow, opts.enforce, sniffed) : null;
    if (!opts.intercept) {
      if (enforced) flow.ex.holdRequest(enforced);
      return;
    }
    const judgeEdited = editedJudge(flow, "client_to_server");
    const charge = opts.budget ? { charge: opts.budget.charge(peerKey(flow.ex, "client_to_server")) } : {};
    flow.ex.holdRequest(opts.intercept.request(pipeline, flow, { maxBytes: opts.maxInspectBytes, ...charge }, enforced, judgeEdited));
  };

  return {
    name: "mcp",
    requestHeaders(ex) {
      const server = formatTarget(ex.server);
      const h = ex.request.headers;
      const legacy = tracker.legacy.lookup(server, ex.request.path);
      const hinted = legacy !== undefined || h["mcp-session-id"] !== undefined || h["mcp-protocol-version"] !== undefined || h["mcp-method"] !== undefined;
      const flow = new McpFlow(ex, server, hinted, legacy);
      ex.notes.set("mcp", flow);
      // Past the budget of what waits behind a judgement (a message that asks shared state), this exchange's
      // bodies are no longer read until it drains: see budget/waiting-budget.ts.
      pipeline.waitingBudget?.attach(ex.id, () => ex.pauseReading(), { client_to_server: peerKey(ex, "client_to_server"), server_to_client: peerKey(ex, "server_to_client") });
      // --intercept holds whole responses and events: it asks for them unencoded, as enforce mode does.
      if (opts.enforce || opts.intercept) stripContentCoding(ex);
      // Node keeps the first Content-Type line, the server may read another (or both, joined): in enforce mode
      // every message of such a body is unreadable (refused with -32052 or, for a body of none, an id-less error).
      const types = headerLines(ex.request.rawHeaders, "content-type").length;
      if (opts.enforce && types > 1) flow.requestHeaderDoubt = `request has ${types} Content-Type header lines; receivers may read either`;
      // A request body is JSON or nothing to a server: one labelled an event stream is read as JSON too (below).
      if (bodyModeFor(h["content-type"]) === "json") {
        flow.requestDecoder = requestDecoder(flow, h);
        ex.tapRequest(flow.requestDecoder);
        holdRequest(flow, false);
      } else if (ex.request.method === "POST" || carriesBody(h)) {
        // A lenient server may accept JSON-RPC under any content type (and on any method): such a body is read
        // too, judged before it is forwarded in enforce mode, recorded as the server would read it in monitor mode.
        // Read as JSON in whatever charset the label names: a lenient server (express.text(), raw-body) honours it.
        const charsets = charsetsOf(h["content-type"]).map((c) => `; charset="${c}"`).join("");
        flow.requestDecoder = requestDecoder(flow, { ...h, "content-type": `application/json${charsets}` });
        flow.sniffedType = headerValue(h["content-type"]) ?? "none";
        ex.tapRequest(flow.requestDecoder);
        holdRequest(flow, true);
      }
    },

    responseHeaders(ex) {
      const flow = ex.notes.get("mcp") as McpFlow | undefined;
      if (!flow || !ex.response) return;
      const assigned = headerValue(ex.response.headers["mcp-session-id"]);
      if (assigned && !flow.session) flow.assignedSession = assigned;
      if (flow.session && !flow.legacy) {
        if (ex.response.status === 404) tracker.endSession(flow.server, flow.session, "expired (404)", ex.id);
        else if (ex.request.method === "DELETE" && ex.response.status < 300) tracker.endSession(flow.server, flow.session, "deleted", ex.id);
      }
      const head = responseHead(flow, ex.response);
      const refusal = opts.enforce ? refusalOf(head) : null;
      if (opts.enforce && refusal !== null) {
        // An event stream is refused on its head: it may never end.
        refuseUnreadResponse(pipeline, flow, opts.enforce, refusal, head.streamLike);
        return;
      }
      const mode = head.mode;
      if (mode === "ignored") return;
      const intercept = opts.intercept;
      const judgeEditedResponse = editedJudge(flow, "server_to_client");
      // Monitor mode with --intercept: JSON bodies and (identity-coded) event streams are judged before they go on.
      if (!opts.enforce && intercept && interceptMonitoredResponse(pipeline, flow, mode, intercept, (take) => decoder(flow, "server_to_client", ex.response!.headers, take), judgeEditedResponse, opts)) return;
      if (!opts.enforce) {
        ex.tapResponse(decoder(flow, "server_to_client", ex.response.headers));
        return;
      }
      // Enforce mode decodes an event stream's coding itself and judges (and sends) the decoded events.
      const headers = mode === "sse" ? { ...ex.response.headers, "content-encoding": undefined } : ex.response.headers;
      // Subscribed now, while the body is still to come: the whole body is judged once it has all arrived.
      const decoded = decodedOnce(ex, "server_to_client", headers, opts.maxInspectBytes);
      const hold = intercept
        ? {
            whole: (events: Judged[], out: Buffer | null) => intercept.response(pipeline, flow, events, out, judgeEditedResponse),
            event: (events: Judged[], out: Buffer) => intercept.event(pipeline, flow, events, out, judgeEditedResponse),
          }
        : undefined;
      enforceResponse(pipeline, flow, mode, (take) => decoder(flow, "server_to_client", headers, take, decoded), opts.enforce, hold);
    },

    exchangeEnd(ex) {
      pipeline.waitingBudget?.detach(ex.id);
      const flow = ex.notes.get("mcp") as McpFlow | undefined;
      if (!flow) return;
      opts.intercept?.ended(ex.id);
      // A stage that throws here is reported by the addon chain (an `addon_error` record of this exchange).
      return Promise.allSettled(flow.decoding).then(() => finish(pipeline, flow));
    },

    close() {
      tracker.close();
    },
  };
}

/**
 * Once every body of the exchange is decoded: what its end means for the requests and the session. Each
 * record is written even if one before it failed; the failures are thrown together at the end.
 */
function finish(pipeline: MessageHandler, flow: McpFlow): void {
  runEach([unreadRequestBody, unreadResponseBody, endOfExchange].map((step) => () => step(pipeline, flow)));
}

/** A body sent on an MCP-hinted request that no decoder read. */
function unreadRequestBody(pipeline: MessageHandler, flow: McpFlow): void {
  const ex = flow.ex;
  if (flow.hinted && !flow.requestDecoder && ex.requestBytes > 0) {
    const type = headerValue(ex.request.headers["content-type"]) ?? "none";
    pipeline.invalid(
      flow.context("client_to_server"),
      `request body is not JSON (content-type: ${type})`,
      ex.requestBytes,
    );
  }
}

/**
 * A 200 answer to an MCP POST must be JSON or an event stream; any other body (JSON-RPC sent as text/plain,
 * say) was not decoded: say so, rather than leave only "stream ended without a response" on the record.
 */
function unreadResponseBody(pipeline: MessageHandler, flow: McpFlow): void {
  const ex = flow.ex;
  const res = ex.response;
  if (flow.isMcp && !flow.legacy && ex.request.method === "POST" && res?.source === "upstream" && res.status === 200 && ex.responseBytes > 0 && !flow.refusedResponse && bodyModeFor(res.headers["content-type"]) === "ignored") {
    const type = headerValue(res.headers["content-type"]) ?? "none";
    pipeline.invalid(
      flow.context("server_to_client"),
      `response body is not JSON or an event stream (content-type: ${type})`,
      ex.responseBytes,
    );
  }
}

/** What the exchange's end means for its session (a legacy stream) and its unanswered requests. */
function endOfExchange(pipeline: MessageHandler, flow: McpFlow): void {
  const tracker: McpTracker = pipeline.tracker;
  const ex = flow.ex;
  // Cut off by the proxy's own shutdown: what is still pending is the proxy's doing, not the peer's, and
  // `close` reports it (and ends the sessions) as "proxy stopped".
  if (ex.error?.code === "shutdown") return;
  if (flow.legacy && flow.legacy.streamFlow === ex.id) {
    tracker.endLegacyStream(ex.id, "stream closed");
    return;
  }
  if (!flow.isMcp || flow.legacy) return;
  const aborted = ex.error?.code === "client_aborted";
  const reason = aborted ? "client closed the stream before the response (a cancel in stateless MCP)" : "stream ended without a response";
  if (flow.session === null || !flow.resumable) {
    tracker.giveUp((p) => p.flow === ex.id && p.direction === "client_to_server", reason);
  }
}

/**
 * A content-coded JSON body's decoded bytes, from the exchange's one decoded-body source of that direction
 * (the auth addon reads the same decoding); undefined for a body with no coding or one the proxy cannot undo.
 */
function decodedOnce(ex: Exchange, direction: Direction, headers: Exchange["request"]["headers"], limit: number): Promise<DecodedBytes> | undefined {
  if (bodyModeFor(headers["content-type"]) !== "json") return undefined;
  const parsed = parseContentEncoding(headers["content-encoding"]);
  if (!parsed.ok || parsed.codings.length === 0) return undefined;
  return new Promise((resolve) => {
    const decoded = new GrowingBuffer(undefined, limit);
    decodedBody(ex, direction === "client_to_server" ? "request" : "response").subscribe({
      limit,
      // A body larger than that as sent is not parsed (see body/index.ts): not worth decoding either.
      maxRawBytes: limit,
      data: (chunk) => void decoded.append(chunk),
      end: ({ problem }) => resolve({ bytes: decoded.view(), problem }),
    });
  });
}

function carriesBody(h: Exchange["request"]["headers"]): boolean {
  return h["transfer-encoding"] !== undefined || (h["content-length"] !== undefined && h["content-length"] !== "0");
}

function hasMethod(value: unknown): boolean {
  return isPlainObject(value) && typeof value.method === "string";
}

function looksLikeJsonRpc(value: unknown): boolean {
  return isPlainObject(value) && "jsonrpc" in value;
}
