/**
 * Enforce mode: the answers the proxy does not pass on because of their head alone, each a refusal that says
 * what it refuses and why. All of them guard one promise: a client must not read a message the proxy did not
 * read the same way (a Content-Type a client may read otherwise, a body the proxy cannot decode). The next such
 * attack gets a refusal here.
 */
import { bodyModeFor, charsetsOf, keepsAscii, type BodyDecoderMode } from "../body/index.js";
import type { Exchange } from "../proxy/exchange.js";
import { headerLines, headerValue } from "../proxy/headers.js";
import type { McpFlow } from "./flow.js";

/** What a response's head says, read once for every refusal. */
export interface ResponseHead {
  flow: McpFlow;
  /** Every Content-Type line as sent (node keeps only the first in `headers`). */
  typeLines: readonly string[];
  /** A type a client may take for an event stream: httpx-sse looks for "text/event-stream" anywhere in it. */
  streamLike: boolean;
  mode: BodyDecoderMode;
}

export interface ResponseRefusal {
  /** What it refuses. */
  readonly name: string;
  /** Why the response is refused (recorded, and told the client), or null when this refusal does not apply. */
  check(head: ResponseHead): string | null;
}

export function responseHead(flow: McpFlow, response: NonNullable<Exchange["response"]>): ResponseHead {
  const typeLines = headerLines(response.rawHeaders, "content-type");
  return { flow, typeLines, streamLike: typeLines.some((line) => /text\/event-stream/i.test(line)), mode: bodyModeFor(response.headers["content-type"]) };
}

/**
 * Node keeps the first Content-Type line; the proxy forwards them all, and a client may read another (httpx
 * joins them with ", ": a charset in the last one holds). A legacy HTTP+SSE stream is not known to be MCP yet
 * when its headers arrive (no MCP header on its GET): any response a client may take for a stream is held to it.
 */
export const severalContentTypes: ResponseRefusal = {
  name: "several Content-Type lines",
  check: ({ flow, typeLines, streamLike }) =>
    typeLines.length > 1 && (flow.isMcp || flow.hinted || streamLike) ? `response has ${typeLines.length} Content-Type header lines; receivers may read either: not passed on` : null,
};

/** A type with bytes past printable ASCII may name a charset the proxy does not see (Python strips NEL as a space around a parameter's name). */
export const streamTypeWithForeignBytes: ResponseRefusal = {
  name: "event stream under a content-type with bytes past printable ASCII",
  check: ({ typeLines, streamLike }) => (streamLike && foreignTypeBytes(typeLines) ? unreadStream("a content-type with bytes past printable ASCII") : null),
};

/** Under a charset that may not read ASCII as ASCII, neither what is passed on nor what the proxy writes in place of a denied event reads to every client as the proxy reads it. */
export const streamUnderForeignCharset: ResponseRefusal = {
  name: "event stream under a charset that may not read ASCII as ASCII",
  check: ({ flow, streamLike }) => {
    const charset = streamLike ? charsetsOf(flow.ex.response?.headers["content-type"]).find((c) => !keepsAscii(c)) : undefined;
    return charset === undefined ? null : unreadStream(`charset "${charset}"`);
  },
};

/**
 * A JSON answer of an MCP exchange under a type with bytes past printable ASCII: a client that decodes the header
 * as UTF-8 (httpx) and the body with its charset (httpx's `response.text`) may read a charset (UTF-7, say) the
 * proxy never saw.
 */
export const jsonTypeWithForeignBytes: ResponseRefusal = {
  name: "JSON answer of an MCP exchange under a content-type with bytes past printable ASCII",
  check: ({ flow, typeLines, mode }) =>
    mode === "json" && (flow.isMcp || flow.hinted) && foreignTypeBytes(typeLines)
      ? "JSON answer under a content-type with bytes past printable ASCII, which a client may read otherwise than the proxy: not passed on"
      : null,
};

/** An answer the proxy does not decode, where its client reads messages (an MCP POST's 2xx body, a stream). */
export const bodyNeitherJsonNorStream: ResponseRefusal = {
  name: "answer with a body neither JSON nor an event stream",
  check: ({ flow, streamLike, mode }) => {
    if (mode !== "ignored" || !(answersWithBody(flow) || streamLike)) return null;
    const type = headerValue(flow.ex.response?.headers["content-type"]) ?? "none";
    return `response body is not JSON or an event stream (content-type: ${type}): not passed on`;
  },
};

/** In the order they are checked: the first that applies is the reason given. */
export const RESPONSE_REFUSALS: readonly ResponseRefusal[] = [severalContentTypes, streamTypeWithForeignBytes, streamUnderForeignCharset, jsonTypeWithForeignBytes, bodyNeitherJsonNorStream];

/** Why enforce mode does not pass this response on, or null. */
export function refusalOf(head: ResponseHead): string | null {
  for (const refusal of RESPONSE_REFUSALS) {
    const why = refusal.check(head);
    if (why !== null) return why;
  }
  return null;
}

function unreadStream(what: string): string {
  return `event stream under ${what}, which a client may read otherwise than the proxy: not passed on`;
}

/** A Content-Type line holds a byte other than tab and printable ASCII (node reads it as latin-1, httpx as UTF-8 when it is). */
function foreignTypeBytes(typeLines: readonly string[]): boolean {
  return typeLines.some((line) => /[^\t\x20-\x7e]/.test(line));
}

/** An MCP POST or session GET (not legacy) answered 2xx with a body its client reads messages from (not 202/204). */
function answersWithBody(flow: McpFlow): boolean {
  const { request, response } = flow.ex;
  if (!flow.isMcp || flow.legacy || (request.method !== "POST" && request.method !== "GET") || !response) return false;
  return response.status >= 200 && response.status < 300 && response.status !== 202 && response.status !== 204;
}
