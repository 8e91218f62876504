/**
 * Which captured request a replay re-sends, and what the capture says around it: the session's handshake
 * (protocol version, client capabilities and info), how it travelled (transport, URL or stdio command) and
 * the tool's definition (for the side-effect guard).
 */
import { buildCalls, type Call } from "../analysis/calls.js";
import { toolDefinitions } from "../analysis/tool-defs.js";
import { compileFilters, isHttps, obj, str, type LogRecord } from "../saved-logs/filters.js";
import { parseQuery } from "../saved-logs/filter-query.js";
import { UsageError } from "../util/usage-error.js";
import { selectorOf } from "../saved-logs/selector.js";

export type Transport = "streamable-http" | "http+sse" | "stdio";

export interface CapturedCall {
  /** `<flow>#<id>`: what `replayOf` says. */
  selector: string;
  flow: string;
  id: string | number;
  method: string;
  tool: string | null;
  params: Record<string, unknown> | undefined;
  /** Why the captured params cannot be sent as they are (cut short or not recorded), or null. */
  paramsProblem: string | null;
  transport: Transport;
  /** host:port, or `stdio:LABEL`. */
  server: string;
  /** Of an HTTP capture: the URL the request went to (legacy: the GET stream's URL). */
  url: string | null;
  protocolVersion: string | null;
  clientCapabilities: unknown;
  clientInfo: Record<string, unknown> | null;
  /** The tool's definition as the capture last listed it. */
  toolDefinition: Record<string, unknown> | null;
  /** Every tool of its server as the capture last listed it (an edit may name another one). */
  serverTools: ReadonlyMap<string, Record<string, unknown>>;
  /** The captured answer: a response or error record, if any. */
  answer: LogRecord | null;
  /** Of a stdio capture: the command its launch recorded (credentials masked), if any. */
  stdioCommand: string[] | null;
}

/** Finds the request `--call SELECTOR` names: its flow (or a prefix of 8 or more characters) and its id. */
export function findBySelector(records: readonly LogRecord[], selector: string): CapturedCall {
  const hash = selector.lastIndexOf("#");
  if (hash <= 0 || hash === selector.length - 1) throw new UsageError(`--call ${selector}: expected <flow>#<id>, as \`tail -v\` shows it under a request`);
  const flow = selector.slice(0, hash);
  const idText = selector.slice(hash + 1);
  if (flow.length < 8) throw new UsageError(`--call ${selector}: give at least 8 characters of the flow`);
  const calls = requestCalls(records).filter((c) => c.flow !== null && c.flow.startsWith(flow) && idMatches(c.id, idText));
  if (calls.length === 0) throw new UsageError(`--call ${selector}: no request with that flow and id in the log (\`tail -v\` shows each request's <flow>#<id>)`);
  const flows = new Set(calls.map((c) => c.flow));
  if (flows.size > 1) throw new UsageError(`--call ${selector}: ${flows.size} flows start with ${flow}: give more of it`);
  return describeCall(records, calls[calls.length - 1]!);
}

/** `--last FILTER`: the latest request that tail's filter tokens (`tool:echo server:host`) select. */
export function findLast(records: readonly LogRecord[], filter: string): CapturedCall {
  const query = parseQuery(filter);
  if (query.problems.length > 0 || query.dir.length > 0 || query.status.length > 0 || query.text.length > 0) {
    const bad = [...query.problems, ...query.text, ...query.dir.map((d) => `dir:${d}`), ...query.status.map((s) => `status:${s}`)];
    throw new UsageError(`--last ${JSON.stringify(filter)}: only tail's tokens server: session: method: tool: decision: (not ${bad.join(" ")})`);
  }
  const matches = compileFilters(query.filters);
  const calls = requestCalls(records).filter((c) => c.records.some(matches));
  const call = calls[calls.length - 1];
  if (!call) throw new UsageError(`--last ${JSON.stringify(filter)}: no client request in the log matches`);
  return describeCall(records, call);
}

/** Requests the client sent (a server's request to its client is not replayed). */
function requestCalls(records: readonly LogRecord[]): (Call & { request: LogRecord })[] {
  return buildCalls(records).filter((c): c is Call & { request: LogRecord } => c.request !== null && c.direction === "client_to_server");
}

function idMatches(id: unknown, text: string): boolean {
  if (typeof id === "number") return String(id) === text;
  if (typeof id === "string") return id === text || JSON.stringify(id) === text;
  return false;
}

function describeCall(records: readonly LogRecord[], call: Call & { request: LogRecord }): CapturedCall {
  const r = call.request;
  const flow = str(r.flow)!;
  const id = r.id as string | number;
  const method = str(r.method);
  if (method === null) throw new UsageError(`${selectorOf(flow, id)}: the captured request has no method`);
  const transport = (str(r.transport) ?? "streamable-http") as Transport;
  const server = str(r.server) ?? "";
  const session = str(r.session);
  const start = records.find((x) => x.event === "session" && x.phase === "start" && x.server === server && session !== null && x.session === session);
  const capabilities = obj(start?.capabilities);
  const { params, problem } = readParams(r.params);
  const defs = toolDefinitions(records.filter((x) => x.server === server));
  const tool = str(r.tool);
  const serverTools = new Map<string, Record<string, unknown>>();
  for (const d of defs.values()) for (const [name, t] of d.tools) if (!serverTools.has(name)) serverTools.set(name, t);
  const toolDefinition = tool === null ? null : (serverTools.get(tool) ?? null);
  const answer = call.records.find((x) => x !== r && (x.kind === "response" || x.kind === "error")) ?? null;
  return {
    selector: selectorOf(flow, id),
    flow,
    id,
    method,
    tool,
    params,
    paramsProblem: problem,
    transport,
    server,
    url: transport === "stdio" ? null : capturedUrl(records, r, transport, start),
    protocolVersion: str(r.protocolVersion) ?? str(start?.protocolVersion),
    clientCapabilities: capabilities?.client ?? {},
    clientInfo: obj(start?.clientInfo) ?? null,
    toolDefinition,
    serverTools,
    answer,
    stdioCommand: transport === "stdio" ? stdioCommandOf(records, session) : null,
  };
}

function readParams(value: unknown): { params: Record<string, unknown> | undefined; problem: string | null } {
  if (value === undefined) return { params: undefined, problem: null };
  const p = obj(value);
  if (!p) return { params: undefined, problem: "its params are not an object" };
  if (p.truncated === true && typeof p.preview === "string") return { params: undefined, problem: `its params were cut short in the log (${String(p.bytes)} bytes over --max-payload-bytes)` };
  if (p.omitted === true) return { params: undefined, problem: "its params were not recorded (--payloads none)" };
  return { params: p, problem: null };
}

/**
 * The URL of an HTTP request: scheme from its `http` record (TLS to the server or intercepted), host:port
 * from `server`, the path as sent. Of a legacy session, the URL of its GET stream (the session record's flow).
 */
function capturedUrl(records: readonly LogRecord[], r: LogRecord, transport: Transport, start: LogRecord | undefined): string {
  const http = records.find((x) => x.event === "http" && x.flow === r.flow);
  const secure = http ? isHttps(http) : true;
  let path = str(r.path) ?? "/";
  if (transport === "http+sse") {
    const stream = start ? records.find((x) => x.event === "http" && x.flow === start.flow) : undefined;
    const get = stream ?? records.find((x) => x.event === "http" && x.server === r.server && x.method === "GET" && /event-stream/.test(String(obj(x.responseHeaders)?.["content-type"] ?? "")));
    path = str(get?.path) ?? "/sse";
  }
  return `${secure ? "https" : "http"}://${str(r.server)}${path}`;
}

function stdioCommandOf(records: readonly LogRecord[], session: string | null): string[] | null {
  const start = records.find((x) => x.event === "start" && x.session === session && Array.isArray(x.command));
  return start ? (start.command as unknown[]).map(String) : null;
}
