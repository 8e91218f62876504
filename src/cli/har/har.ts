import { STATUS_CODES } from "node:http";
import { isIP } from "node:net";
import { header, num, obj, str, type LogRecord } from "../tail/filters.js";

/** HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), the parts written here. */
export interface Har {
  log: {
    version: "1.2";
    creator: { name: string; version: string };
    entries: HarEntry[];
    comment?: string;
  };
}

export interface HarNameValue {
  name: string;
  value: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    queryString: HarNameValue[];
    postData?: { mimeType: string; text: string; comment?: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: HarNameValue[];
    headers: HarNameValue[];
    content: { size: number; mimeType: string; text?: string; comment?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { blocked: number; dns: number; connect: number; ssl: number; send: number; wait: number; receive: number };
  serverIPAddress?: string;
  connection?: string;
  comment?: string;
  /** Custom field (HAR allows `_` names): what mcp-wiretap knows about the exchange. */
  _mcp: McpEntryInfo;
}

export interface McpEntryInfo {
  flow: string;
  mode: string | null;
  client: string | null;
  statusSource: string | null;
  tls: unknown;
  transport?: string;
  session?: string;
  protocolVersion?: string;
  error?: unknown;
  insecureUpstream?: true;
  /** Bodies rebuilt from logged messages whose payload the log holds only in part (truncated, omitted). */
  incomplete?: true;
  messages: McpMessageSummary[];
}

export interface McpMessageSummary {
  time: string | null;
  direction: string | null;
  kind: string | null;
  id?: unknown;
  method?: string;
  tool?: string;
  bytes?: number;
  latencyMs?: number;
  decision?: { action: string; enforced: boolean; rules: string[]; effect?: string };
  reason?: string;
  sseEventId?: string;
  batch?: unknown;
  related?: unknown;
  argsHash?: string;
}

export interface HarOptions {
  creator: { name: string; version: string };
  /** Which exchanges to export (an exchange is kept when its http record or one of its messages matches). */
  filter?: (record: LogRecord) => boolean;
  comment?: string;
}

const PAYLOAD_FIELD: Record<string, string> = { request: "params", notification: "params", response: "result", error: "error" };

/**
 * HAR 1.2 from log records: one entry per `http` record (exchange), sorted by start time. Headers are the
 * logged ones (already redacted). Bodies are rebuilt from the exchange's `rpc` records, since the log keeps
 * messages, not bytes: the request body from the client's messages (a batch as an array), the response body
 * from the server's — as SSE (`event: message` / `id:` / `data:`) when the response was an event stream,
 * else JSON. Whitespace and member order may differ from the wire. A payload the log truncated or left out
 * is shown as its preview (or nothing) followed by a `[mcp-wiretap: …]` note, and the body's `comment` says
 * so: never invented. A body that carried no MCP (or an answer written by the proxy) is not in the log: no
 * `text`, and a comment.
 */
export function buildHar(records: readonly LogRecord[], opts: HarOptions): Har {
  const byFlow = new Map<string, LogRecord[]>();
  for (const r of records) {
    if (r.event !== "rpc" || typeof r.flow !== "string") continue;
    const list = byFlow.get(r.flow) ?? [];
    list.push(r);
    byFlow.set(r.flow, list);
  }
  const entries: HarEntry[] = [];
  const exported = new Set<string>();
  for (const r of records) {
    if (r.event !== "http" || typeof r.flow !== "string") continue;
    const messages = byFlow.get(r.flow) ?? [];
    if (opts.filter && !opts.filter(r) && !messages.some(opts.filter)) continue;
    entries.push(entry(r, messages));
    exported.add(r.flow);
  }
  entries.sort((a, b) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime));
  const orphans = [...byFlow.keys()].filter((flow) => !exported.has(flow) && (!opts.filter || byFlow.get(flow)!.some(opts.filter))).length;
  const notes = [opts.comment, orphans > 0 ? `${orphans} exchange(s) with MCP messages but no http record (still open when the log ended?) are not included.` : undefined].filter(Boolean);
  return {
    log: {
      version: "1.2",
      creator: opts.creator,
      entries,
      ...(notes.length > 0 ? { comment: notes.join(" ") } : {}),
    },
  };
}

function entry(r: LogRecord, messages: LogRecord[]): HarEntry {
  const durationMs = Math.max(0, num(r.durationMs) ?? 0);
  const endedAt = Date.parse(str(r.time) ?? "");
  const started = Number.isNaN(endedAt) ? new Date(0) : new Date(endedAt - durationMs);
  const server = str(r.server) ?? "unknown";
  const tls = obj(r.tls);
  const secure = r.mode === "mitm" || (tls !== undefined && tls.server !== null && tls.server !== undefined);
  const scheme = secure ? "https" : "http";
  const pathText = str(r.path) ?? "/";
  const url = `${scheme}://${authority(server, scheme)}${pathText.startsWith("/") ? pathText : `/${pathText}`}`;
  const httpVersion = `HTTP/${str(r.httpVersion) ?? "1.1"}`;
  const requestHeaders = harHeaders(r.requestHeaders);
  const responseHeaders = harHeaders(r.responseHeaders);
  const status = num(r.status);
  const requestType = header(r.requestHeaders, "content-type") ?? "";
  const responseType = header(r.responseHeaders, "content-type") ?? "";
  const requestBytes = num(r.requestBytes) ?? -1;
  const responseBytes = num(r.responseBytes) ?? -1;

  const sent = messages.filter((m) => m.direction === "client_to_server" && isWireMessage(m));
  const received = messages.filter((m) => m.direction === "server_to_client" && isWireMessage(m));
  const incomplete = { value: false };

  let postData: HarEntry["request"]["postData"];
  if (sent.length > 0) {
    const body = jsonBody(sent, incomplete);
    postData = { mimeType: requestType || "application/json", text: body.text, ...(body.notes.length > 0 ? { comment: body.notes.join(" ") } : {}) };
  } else if (requestBytes > 0) {
    postData = { mimeType: requestType, text: "", comment: `mcp-wiretap: the ${requestBytes}-byte body carried no MCP message the log kept; bodies are not logged.` };
  }

  const content: HarEntry["response"]["content"] = { size: Math.max(0, responseBytes), mimeType: responseType };
  if (received.length > 0) {
    const body = /text\/event-stream/i.test(responseType) ? sseBody(received, incomplete) : jsonBody(received, incomplete);
    content.text = body.text;
    if (body.notes.length > 0) content.comment = body.notes.join(" ");
  } else if (str(r.statusSource) === "proxy") {
    const denied = messages.find((m) => obj(m.decision)?.enforced === true);
    const effect = str(obj(denied?.decision)?.effect);
    content.comment = `mcp-wiretap: answered by the proxy itself${effect ? ` (${effect})` : ""}; that answer is not in the log.`;
  } else if (responseBytes > 0) {
    content.comment = `mcp-wiretap: the ${responseBytes}-byte body carried no MCP message the log kept; bodies are not logged.`;
  }
  const legacyStream = messages.find((m) => m.transport === "http+sse" && m.direction === "server_to_client" && m.flow === r.flow);
  if (legacyStream && str(r.method) === "GET") {
    const endpoint = str(legacyStream.session);
    const note = `mcp-wiretap: the \`endpoint\` event that opened this legacy (HTTP+SSE) session${endpoint ? ` (${endpoint})` : ""} is not in the log; the messages are.`;
    content.comment = content.comment ? `${content.comment} ${note}` : note;
  }

  const error = r.error;
  const serverHost = hostPart(server);
  const first = messages[0];
  const info: McpEntryInfo = {
    flow: str(r.flow)!,
    mode: str(r.mode),
    client: str(r.client),
    statusSource: str(r.statusSource),
    tls: r.tls ?? null,
    ...(first && str(first.transport) ? { transport: str(first.transport)! } : {}),
    ...(sessionOf(r, messages) ? { session: sessionOf(r, messages)! } : {}),
    ...(protocolOf(messages) ? { protocolVersion: protocolOf(messages)! } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(r.insecureUpstream === true ? { insecureUpstream: true as const } : {}),
    ...(incomplete.value ? { incomplete: true as const } : {}),
    messages: messages.map(summary),
  };
  const errorObj = obj(error);
  return {
    startedDateTime: started.toISOString(),
    time: durationMs,
    request: {
      method: str(r.method) ?? "GET",
      url,
      httpVersion,
      cookies: [],
      headers: requestHeaders,
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
      headers: responseHeaders,
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
    ...(errorObj ? { comment: `error: ${[str(errorObj.code), str(errorObj.message)].filter(Boolean).join(": ")}` } : {}),
    _mcp: info,
  };
}

/** Records that stand for a message on the wire (not the bookkeeping of an unanswered request). */
function isWireMessage(m: LogRecord): boolean {
  const kind = str(m.kind);
  if (kind === "unanswered") return false;
  if (kind === "invalid") return m.message !== undefined;
  return kind !== null;
}

interface Body {
  text: string;
  notes: string[];
}

/** JSON: one message as itself, a batch as an array; consecutive batches and lone messages one per line. */
function jsonBody(messages: LogRecord[], incomplete: { value: boolean }): Body {
  const notes: string[] = [];
  const parts = groups(messages).map((group) => {
    const texts = group.map((m) => messageText(m, notes, incomplete));
    return group.length > 1 || obj(group[0]!.batch) ? `[${texts.join(",")}]` : texts[0]!;
  });
  return { text: parts.join("\n"), notes: unique(notes) };
}

/** SSE: one `event: message` per message (a batch as one event with an array), in order. */
function sseBody(messages: LogRecord[], incomplete: { value: boolean }): Body {
  const notes: string[] = [];
  const text = groups(messages)
    .map((group) => {
      const texts = group.map((m) => messageText(m, notes, incomplete));
      const data = group.length > 1 || obj(group[0]!.batch) ? `[${texts.join(",")}]` : texts[0]!;
      const id = str(group[0]!.sseEventId);
      return `event: message\n${id !== null ? `id: ${id}\n` : ""}${data.split("\n").map((line) => `data: ${line}`).join("\n")}\n\n`;
    })
    .join("");
  return { text, notes: unique(notes) };
}

/** Consecutive members of one batch together; other messages alone. */
function groups(messages: LogRecord[]): LogRecord[][] {
  const out: LogRecord[][] = [];
  for (const m of messages) {
    const batch = obj(m.batch);
    const last = out.at(-1);
    const lastBatch = last ? obj(last[0]!.batch) : undefined;
    if (batch && last && lastBatch && num(batch.index) !== 0 && num(batch.size) === num(lastBatch.size) && last.length < (num(lastBatch.size) ?? 0) && str(last[0]!.sseEventId) === str(m.sseEventId)) {
      last.push(m);
    } else {
      out.push([m]);
    }
  }
  return out;
}

/** The JSON text of a logged message, as the peer sent it (up to member order and whitespace). */
function messageText(m: LogRecord, notes: string[], incomplete: { value: boolean }): string {
  const kind = str(m.kind)!;
  if (kind === "invalid") {
    return payloadText(m.message, notes, incomplete, "the invalid message") ?? "";
  }
  const head: Record<string, unknown> = { jsonrpc: "2.0" };
  if (kind !== "notification") head.id = m.id ?? null;
  if (kind === "request" || kind === "notification") head.method = str(m.method) ?? "";
  const field = PAYLOAD_FIELD[kind];
  const open = JSON.stringify(head).slice(0, -1);
  if (field === undefined || !(field in m)) return `${open}}`;
  const text = payloadText(m[field], notes, incomplete, field);
  return text === null ? `${open}}` : `${open},${JSON.stringify(field)}:${text}}`;
}

/** A payload's JSON, or its preview and a note when the log holds only part of it. */
function payloadText(value: unknown, notes: string[], incomplete: { value: boolean }, what: string): string | null {
  if (value === undefined) return null;
  const marker = obj(value);
  if (marker?.truncated === true && typeof marker.preview === "string") {
    incomplete.value = true;
    notes.push(`mcp-wiretap: a ${what} was truncated in the log (${num(marker.bytes) ?? "?"} bytes, ${str(marker.sha256) ?? "no hash"}); its preview is shown, followed by a note.`);
    return `${marker.preview}…[mcp-wiretap: truncated, ${num(marker.bytes) ?? "?"} bytes, ${str(marker.sha256) ?? "no hash"}]`;
  }
  if (marker?.omitted === true) {
    incomplete.value = true;
    notes.push(`mcp-wiretap: a ${what} was left out of the log (${num(marker.bytes) ?? "?"} bytes, ${str(marker.sha256) ?? "no hash"}).`);
    return `[mcp-wiretap: omitted, ${num(marker.bytes) ?? "?"} bytes, ${str(marker.sha256) ?? "no hash"}]`;
  }
  if (marker?.unserializable === true) {
    incomplete.value = true;
    notes.push(`mcp-wiretap: a ${what} could not be logged (${str(marker.reason) ?? "unserializable"}).`);
    return `[mcp-wiretap: not logged: ${str(marker.reason) ?? "unserializable"}]`;
  }
  return JSON.stringify(value) ?? null;
}

function summary(m: LogRecord): McpMessageSummary {
  const s: McpMessageSummary = { time: str(m.time), direction: str(m.direction), kind: str(m.kind) };
  if (m.id !== undefined && m.id !== null) s.id = m.id;
  if (str(m.method)) s.method = str(m.method)!;
  if (str(m.tool)) s.tool = str(m.tool)!;
  if (num(m.bytes) !== null) s.bytes = num(m.bytes)!;
  if (num(m.latencyMs) !== null) s.latencyMs = num(m.latencyMs)!;
  const d = obj(m.decision);
  if (d && str(d.action) && (d.action !== "allow" || (Array.isArray(d.rules) && d.rules.length > 0))) {
    s.decision = {
      action: str(d.action)!,
      enforced: d.enforced === true,
      rules: Array.isArray(d.rules) ? d.rules.map((x) => str(obj(x)?.name)).filter((x): x is string => x !== null) : [],
      ...(str(d.effect) ? { effect: str(d.effect)! } : {}),
    };
  }
  if (str(m.reason)) s.reason = str(m.reason)!;
  if (str(m.sseEventId)) s.sseEventId = str(m.sseEventId)!;
  if (m.batch !== undefined) s.batch = m.batch;
  if (m.related !== undefined) s.related = m.related;
  if (str(m.argsHash)) s.argsHash = str(m.argsHash)!;
  return s;
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

function hostPart(server: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(server);
  if (bracketed) return bracketed[1]!;
  const m = /^([^:]*):\d+$/.exec(server);
  return m ? m[1]! : server;
}

function sessionOf(r: LogRecord, messages: LogRecord[]): string | null {
  return messages.map((m) => str(m.session)).find((s) => s !== null) ?? header(r.requestHeaders, "mcp-session-id") ?? null;
}

function protocolOf(messages: LogRecord[]): string | null {
  return messages.map((m) => str(m.protocolVersion)).find((s) => s !== null) ?? null;
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
