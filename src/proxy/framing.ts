import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { HOP_BY_HOP } from "./headers.js";

/**
 * How a request's body is delimited, as node's parser read it. The upstream always gets the proxy's own
 * framing for it (the client's Content-Length and Transfer-Encoding are never forwarded as they are): a
 * body sent upstream without framing would be read there as the next request (node's client sends a GET,
 * DELETE, HEAD or OPTIONS body raw when no framing header says otherwise).
 */
export type RequestFraming = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" };

export type FramingResult = { ok: true; framing: RequestFraming } | { ok: false; reason: string };

/** Headers whose removal by a `Connection` option would change how the upstream delimits or routes the message. */
const NEVER_CONNECTION_OPTIONS = new Map([
  ["content-length", "Content-Length"],
  ["transfer-encoding", "Transfer-Encoding"],
  ["host", "Host"],
]);

/** The field names a message's `Connection` header lists (RFC 9110 §7.6.1), lower-cased. */
export function connectionOptions(raw: readonly string[]): Set<string> {
  const options = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== "connection") continue;
    for (const token of raw[i + 1]!.split(",")) {
      const name = token.trim().toLowerCase();
      if (name !== "") options.add(name);
    }
  }
  return options;
}

/**
 * The request's framing, or why it is refused: a body whose framing the proxy could read otherwise than
 * the upstream (a transfer coding other than chunked, Transfer-Encoding in HTTP/1.0) or that the client asks
 * to strip of its framing or Host on the way (`Connection: Content-Length`).
 */
export function requestFraming(req: IncomingMessage): FramingResult {
  for (const name of connectionOptions(req.rawHeaders)) {
    const shown = NEVER_CONNECTION_OPTIONS.get(name);
    if (shown) return { ok: false, reason: `Connection header names ${shown}: a proxy would drop it and change how the server reads the message` };
  }
  const te = req.headers["transfer-encoding"];
  if (te !== undefined) {
    if (req.httpVersion === "1.0") return { ok: false, reason: "HTTP/1.0 request with Transfer-Encoding (RFC 9112 §6.1: its framing is faulty)" };
    const codings = te.split(",").map((c) => c.trim().toLowerCase());
    if (codings.length !== 1 || codings[0] !== "chunked") {
      return { ok: false, reason: `Transfer-Encoding ${JSON.stringify(te.slice(0, 100))}: only chunked is forwarded (the proxy does not undo other transfer codings)` };
    }
    return { ok: true, framing: { kind: "chunked" } };
  }
  const length = req.headers["content-length"];
  // node's parser has already refused a Content-Length that is not one decimal number.
  if (length !== undefined) return { ok: true, framing: { kind: "length", length: Number(length) } };
  return { ok: true, framing: { kind: "none" } };
}

/** True when the request declares a body (a Content-Length above zero, or chunked). */
export function declaresBody(framing: RequestFraming): boolean {
  return framing.kind === "chunked" || (framing.kind === "length" && framing.length > 0);
}

/**
 * The request headers as the upstream gets them, for addons to judge: without the fields a `Connection`
 * option removes on the way (the standard hop-by-hop ones stay, for the record).
 */
export function headersAsForwarded(headers: IncomingHttpHeaders, raw: readonly string[]): IncomingHttpHeaders {
  const removed = [...connectionOptions(raw)].filter((name) => !HOP_BY_HOP.has(name) && headers[name] !== undefined);
  if (removed.length === 0) return headers;
  const out: IncomingHttpHeaders = { ...headers };
  for (const name of removed) delete out[name];
  return out;
}

/** The framing header the proxy sends upstream for a body of this framing (or of exactly `length` bytes). */
export function framingHeader(framing: RequestFraming, length?: number): string[] {
  if (length !== undefined) return ["content-length", String(length)];
  if (framing.kind === "length") return ["content-length", String(framing.length)];
  if (framing.kind === "chunked") return ["transfer-encoding", "chunked"];
  return [];
}
