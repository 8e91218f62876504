import zlib from "node:zlib";
import { parseContentEncoding, type BodyDecoderTap, type ContentCoding } from "../body/index.js";
import type { Exchange, RequestVerdict } from "../proxy/exchange.js";
import { headerValue } from "../proxy/headers.js";
import { DROPPED_EVENT, isEnforcedDeny, policyError, replacementForServerMessage, sseEvent } from "../policy/enforcement.js";
import type { McpFlow } from "./flow.js";
import type { RpcEvent } from "./rpc-event.js";
import type { McpTracker } from "./tracker.js";

export interface EnforceOptions {
  maxInspectBytes: number;
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
 * Holds the client's body until its messages are judged. A denied request never reaches the upstream:
 * the client gets a policy error in the form it reads responses in.
 */
export function enforceRequest(tracker: McpTracker, flow: McpFlow, opts: EnforceOptions, sniffed = false): void {
  flow.ex.holdRequest({
    maxBytes: opts.maxInspectBytes,
    decide: async (body): Promise<RequestVerdict> => {
      // A large body under a non-JSON content type, on an exchange with no MCP header, is not MCP: it passes.
      if (body === null && sniffed && !flow.hinted) return { action: "forward" };
      if (body === null) {
        return respond(413, "text/plain; charset=utf-8", `mcp-wiretap: request larger than --max-inspect-bytes cannot be judged in enforce mode\n`);
      }
      await flow.requestDecoder?.done;
      const events = flow.requestEvents;
      const denied = events.filter(isEnforcedDeny);
      if (denied.length === 0) return { action: "forward" };
      const requests = events.filter((e) => e.kind === "request" && e.id !== null && e.id !== undefined);
      if (requests.length > 0 || denied.some((e) => e.kind === "notification")) {
        // The whole body is refused: one denied message blocks its batch.
        for (const r of requests) tracker.correlator.answer(r.server, flow.scope, r.direction, r.id!);
        const errors = requests.map((r) => policyError(r.id!, r.decision?.enforced ? r.decision : denied[0]!.decision!));
        return answerClient(flow, errors, events.some((e) => e.batch !== undefined));
      }
      return { action: "forward", body: Buffer.from(JSON.stringify(replaceClientResponses(events))) };
    },
  });
}

/** Rewrites the server's JSON or event-stream response so that denied messages are replaced or dropped. */
export function enforceResponse(tracker: McpTracker, flow: McpFlow, tap: BodyDecoderTap, opts: EnforceOptions): boolean {
  const ex = flow.ex;
  const coding = headerValue(ex.response!.headers["content-encoding"]);
  // Enforce mode asks for identity; a server that compresses anyway still has its JSON bodies judged
  // (decoded, and a replacement encoded the same way). A compressed event stream is only recorded.
  const codings = coding ? parseContentEncoding(coding) : null;
  const compressed = codings !== null && (!codings.ok || codings.codings.length > 0);
  if (tap.mode === "ignored") return false;
  if (compressed && (tap.mode !== "json" || !codings?.ok)) {
    flow.notEnforceable = `the server compressed the ${tap.mode === "sse" ? "event stream" : "body"} (content-encoding: ${coding}) although asked not to`;
    return false;
  }
  // The decoder is fed by the rewriter, not by a tap: this one only passes on an aborted body. A whole JSON
  // body is ended by the rewriter itself, after it has fed it (the stream's end comes first).
  const abort = (r: Parameters<NonNullable<typeof tap.abort>>[0]): void => (tap.abort ? tap.abort(r) : tap.end());
  ex.tapResponse({ data() {}, end: () => (tap.mode === "json" ? undefined : tap.end()), abort });
  const judge = (piece: Buffer): RpcEvent[] => {
    flow.captured = [];
    tap.data(piece);
    if (tap.mode === "json") tap.end();
    const events = flow.captured;
    flow.captured = null;
    return events;
  };
  /** A compressed body: decoded asynchronously by the tap, judged once every message is out. */
  const judgeDecoded = async (body: Buffer): Promise<RpcEvent[]> => {
    const events: RpcEvent[] = [];
    flow.captured = events;
    tap.data(body);
    tap.end();
    await tap.done;
    flow.captured = null;
    return events;
  };
  if (tap.mode === "json") {
    ex.rewriteResponse({
      kind: "whole",
      maxBytes: opts.maxInspectBytes,
      rewrite: async (body) => {
        if (body === null) {
          tracker.invalid(flow.context("server_to_client"), "response larger than --max-inspect-bytes: passed on unjudged", 0);
          tap.end();
          return null;
        }
        const events = compressed ? await judgeDecoded(body) : judge(body);
        if (!events.some(isEnforcedDeny)) return null;
        const out = events.map((e) => (isEnforcedDeny(e) ? replacementForServerMessage(e, opts.removeDeniedTools) : e.raw)).filter((m) => m !== null);
        const batch = events.some((e) => e.batch !== undefined);
        const replaced = Buffer.from(batch ? JSON.stringify(out) : out.length > 0 ? JSON.stringify(out[0]) : "");
        return codings?.ok ? encodeAs(replaced, codings.codings) : replaced;
      },
    });
  } else {
    flow.injector = ex.rewriteResponse({
      kind: "events",
      maxEventBytes: opts.maxInspectBytes,
      event: (raw) => {
        const events = judge(raw);
        if (!events.some(isEnforcedDeny)) return raw;
        const replaced = events.map((e) => (isEnforcedDeny(e) ? replacementForServerMessage(e, opts.removeDeniedTools) : e.raw)).filter((m) => m !== null);
        if (replaced.length === 0) return DROPPED_EVENT;
        const id = events[0]?.sseEventId;
        return sseEvent(replaced.length === 1 ? replaced[0] : replaced, id);
      },
      oversized: () => tracker.invalid(flow.context("server_to_client"), "event larger than --max-inspect-bytes: passed on unjudged", 0),
    });
  }
  return true;
}

/** `body` encoded with the codings `parseContentEncoding` gave (listed last-applied first). */
function encodeAs(body: Buffer, codings: readonly ContentCoding[]): Buffer {
  let out = body;
  for (const c of [...codings].reverse()) {
    if (c === "gzip") out = zlib.gzipSync(out);
    else if (c === "deflate") out = zlib.deflateSync(out);
    else if (c === "br") out = zlib.brotliCompressSync(out);
    else out = zlib.zstdCompressSync(out);
  }
  return out;
}

/** The client's own responses (to server requests) that were denied become errors for the server. */
function replaceClientResponses(events: RpcEvent[]): unknown {
  const out = events.map((e) => (isEnforcedDeny(e) ? policyError(e.id ?? null, e.decision!) : e.raw));
  return events.some((e) => e.batch !== undefined) ? out : out[0];
}

function answerClient(flow: McpFlow, errors: Record<string, unknown>[], batch: boolean): RequestVerdict {
  if (errors.length === 0) return respond(202, undefined, "");
  if (flow.legacy) {
    // Legacy transport: the POST is only acknowledged; answers travel on the session's GET stream.
    for (const e of errors) flow.legacy.inject?.(sseEvent(e));
    return respond(202, undefined, "");
  }
  const payload = JSON.stringify(batch ? errors : errors[0]);
  const accept = headerValue(flow.ex.request.headers["accept"]) ?? "";
  if (!/application\/json|\*\/\*/i.test(accept) && /text\/event-stream/i.test(accept)) {
    return respond(200, "text/event-stream", `event: message\ndata: ${payload}\n\n`);
  }
  return respond(200, "application/json", payload);
}

function respond(status: number, contentType: string | undefined, body: string): RequestVerdict {
  const headers: Record<string, string> = contentType ? { "content-type": contentType } : {};
  return { action: "respond", response: { status, headers, body: Buffer.from(body) } };
}
