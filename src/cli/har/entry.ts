import { STATUS_CODES } from "node:http";
import { isIP } from "node:net";
import { errorText, header, hostOf, isHttps, num, obj, str, type LogRecord } from "../../saved-logs/filters.js";
import { requestPostData, responseContent, type IncompleteFlag } from "./bodies.js";
import type { HarEntry, HarNameValue } from "./har-format.js";
import { mcpInfo } from "./mcp-info.js";

/** The HAR entry of one `http` record and the `rpc` records of its exchange. */
export function harEntry(r: LogRecord, messages: LogRecord[]): HarEntry {
  const durationMs = Math.max(0, num(r.durationMs) ?? 0);
  const endedAt = Date.parse(str(r.time) ?? "");
  const started = Number.isNaN(endedAt) ? new Date(0) : new Date(endedAt - durationMs);
  const server = str(r.server) ?? "unknown";
  const scheme = isHttps(r) ? "https" : "http";
  const pathText = str(r.path) ?? "/";
  const url = `${scheme}://${authority(server, scheme)}${pathText.startsWith("/") ? pathText : `/${pathText}`}`;
  const httpVersion = `HTTP/${str(r.httpVersion) ?? "1.1"}`;
  const status = num(r.status);
  const requestBytes = num(r.requestBytes) ?? -1;
  const responseBytes = num(r.responseBytes) ?? -1;

  const incomplete: IncompleteFlag = { value: false };
  const postData = requestPostData(r, messages, incomplete);
  const content = responseContent(r, messages, incomplete);

  const serverHost = hostOf(server);
  const errorObj = obj(r.error);
  return {
    startedDateTime: started.toISOString(),
    time: durationMs,
    request: {
      method: str(r.method) ?? "GET",
      url,
      httpVersion,
      cookies: [],
      headers: harHeaders(r.requestHeaders),
      queryString: queryOf(pathText),
      ...(postData ? { postData } : {}),
      headersSize: -1,
      bodySize: requestBytes,
    },
    response: {
      status: status ?? 0,
      statusText: status === null ? "" : (STATUS_CODES[status] ?? ""),
      httpVersion,
      cookies: [],
      headers: harHeaders(r.responseHeaders),
      content,
      redirectURL: header(r.responseHeaders, "location") ?? "",
      headersSize: -1,
      bodySize: status === null ? -1 : responseBytes,
    },
    cache: {},
    // The log has the exchange's total duration only.
    timings: { blocked: -1, dns: -1, connect: -1, ssl: -1, send: 0, wait: durationMs, receive: 0 },
    ...(isIP(serverHost) ? { serverIPAddress: serverHost } : {}),
    ...(str(r.client) ? { connection: str(r.client)! } : {}),
    ...(errorObj ? { comment: `error: ${errorText(errorObj)}` } : {}),
    _mcp: mcpInfo(r, messages, incomplete.value),
  };
}

/** Logged headers (name → string or string[]) as HAR name/value pairs, in their order. */
export function harHeaders(headers: unknown): HarNameValue[] {
  const o = obj(headers);
  if (!o) return [];
  const out: HarNameValue[] = [];
  for (const [name, value] of Object.entries(o)) {
    if (Array.isArray(value)) for (const v of value) out.push({ name, value: String(v) });
    else if (value !== undefined && value !== null) out.push({ name, value: String(value) });
  }
  return out;
}

function queryOf(pathText: string): HarNameValue[] {
  const q = pathText.indexOf("?");
  if (q < 0) return [];
  const out: HarNameValue[] = [];
  for (const [name, value] of new URLSearchParams(pathText.slice(q + 1))) out.push({ name, value });
  return out;
}

/** host:port without the scheme's default port. */
function authority(server: string, scheme: string): string {
  const m = /^(.*):(\d+)$/.exec(server);
  if (!m) return server;
  const port = Number(m[2]);
  return (scheme === "https" && port === 443) || (scheme === "http" && port === 80) ? m[1]! : server;
}

