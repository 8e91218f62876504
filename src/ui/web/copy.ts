import { obj, str, type LogRecord } from "../../saved-logs/filters.js";
import { shellQuote } from "../../util/shell-quote.js";

/**
 * The JSON-RPC message an `rpc` record describes, rebuilt from its fields; null when the record cannot give it
 * exactly (an invalid or unanswered record, a payload cut short by --payloads, or left out).
 */
export function messageOf(r: LogRecord): Record<string, unknown> | null {
  const kind = str(r.kind);
  const field = kind === "request" || kind === "notification" ? "params" : kind === "response" ? "result" : kind === "error" ? "error" : null;
  if (field === null) return null;
  const payload = r[field];
  if (obj(payload)?.truncated === true || obj(payload)?.unserializable === true) return null;
  if (payload === undefined && field !== "params") return null;
  const id = r.id === null || r.id === undefined ? null : r.id;
  const out: Record<string, unknown> = { jsonrpc: "2.0" };
  if (kind !== "notification") out.id = id;
  if (kind === "request" || kind === "notification") {
    const method = str(r.method);
    if (method === null) return null;
    out.method = method;
  }
  if (payload !== undefined) out[field] = payload;
  return out;
}

/**
 * A curl command that sends a client's message again as it was sent (over Streamable HTTP or the stateless
 * revision; a legacy POST goes to its endpoint and is answered on the stream). Credentials are never in the
 * log: add them (`-H 'Authorization: …'`). Null for what a client did not send over HTTP.
 */
export function curlOf(r: LogRecord, https: boolean): string | null {
  const message = messageOf(r);
  const server = str(r.server);
  if (message === null || server === null || r.direction !== "client_to_server" || r.transport === "stdio") return null;
  const url = `${https ? "https" : "http"}://${server}${str(r.path) ?? "/"}`;
  const session = str(r.session);
  const version = str(r.protocolVersion);
  const headers = ["content-type: application/json", "accept: application/json, text/event-stream"];
  if (r.transport === "streamable-http" && session !== null) headers.push(`mcp-session-id: ${session}`);
  if (version !== null) headers.push(`mcp-protocol-version: ${version}`);
  return ["curl -sS", ...headers.map((h) => `-H ${shellQuote(h)}`), `--data-binary ${shellQuote(JSON.stringify(message))}`, shellQuote(url)].join(" ");
}
