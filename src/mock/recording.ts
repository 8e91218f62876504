/**
 * What `mcp-wiretap mock` serves, read from a capture: one server's handshake (initialize result), its list
 * results, and every call a client made with the answer it got and the progress before it.
 */
import { buildCalls } from "../analysis/calls.js";
import { serverNames } from "../analysis/tool-defs.js";
import { num, obj, str, type LogRecord } from "../saved-logs/filters.js";
import { UsageError } from "../util/usage-error.js";
import { selectorOf } from "../saved-logs/selector.js";

export type Message = Record<string, unknown>;

/** Methods answered from their recorded result whatever the call's params (bar the page cursor). */
export const LIST_METHODS = new Set(["tools/list", "prompts/list", "resources/list", "resources/templates/list"]);

export interface RecordedProgress {
  /** When it came, after the request (ms). */
  atMs: number;
  params: Message;
}

export interface RecordedCall {
  /** `<flow>#<id>` of the request, as `tail -v` shows it. */
  selector: string;
  method: string;
  tool: string | null;
  params: Message | undefined;
  /** The answer as JSON-RPC members: `{ result }` or `{ error }`; null when the log holds none, or not whole. */
  answer: { result: unknown } | { error: unknown } | null;
  /** Why `answer` is null. */
  problem: string | null;
  progress: RecordedProgress[];
  /** Answer time after the request (ms). */
  latencyMs: number;
}

export interface Recording {
  /** How the server is named: `serverInfo.name@host` or `host:port` / `stdio:LABEL`. */
  name: string;
  initialize: Message;
  /** Latest list result per method and cursor (`tools/list` or `tools/list cursor`). */
  lists: Map<string, { result: unknown } | { error: unknown }>;
  calls: RecordedCall[];
}

/** The recorded server `--server NAME` names (its serverInfo name or its address); with one server, that one. */
export function readRecording(records: readonly LogRecord[], wanted: string | undefined): Recording {
  const names = serverNames(records);
  const servers = [...new Set(records.filter((r) => r.event === "rpc" && typeof r.server === "string").map((r) => r.server as string))];
  const label = (s: string): string => (names.has(s) ? `${names.get(s)} (${s})` : s);
  const chosen = wanted === undefined ? servers : servers.filter((s) => s === wanted || names.get(s) === wanted);
  if (chosen.length === 0) {
    throw new UsageError(servers.length === 0 ? "the log holds no MCP messages" : `no server ${JSON.stringify(wanted)} in the log; it holds: ${servers.map(label).join(", ")}`);
  }
  if (chosen.length > 1) throw new UsageError(`the log holds several servers: pick one with --server (${chosen.map(label).join(", ")})`);
  const server = chosen[0]!;
  const mine = records.filter((r) => r.server === server && (r.event === "rpc" || r.event === "session"));
  const lists = new Map<string, { result: unknown } | { error: unknown }>();
  const calls: RecordedCall[] = [];
  let initialize: Message | null = null;
  const byRequest = new Map<LogRecord, RecordedCall>();
  for (const call of buildCalls(mine)) {
    const request = call.request;
    if (!request || call.direction !== "client_to_server" || call.method === null) continue;
    const answerRecord = call.records.find((r) => r !== request && (r.kind === "response" || r.kind === "error") && r.direction === "server_to_client");
    const { answer, problem } = answerOf(answerRecord);
    const params = obj(request.params);
    if (call.method === "initialize") {
      if (answer && "result" in answer && obj(answer.result)) initialize = obj(answer.result)!;
      continue;
    }
    if (LIST_METHODS.has(call.method)) {
      if (answer) lists.set(listKey(call.method, params), answer);
      continue;
    }
    const recorded: RecordedCall = {
      selector: selectorOf(String(request.flow), request.id),
      method: call.method,
      tool: call.tool,
      params,
      answer,
      problem,
      progress: [],
      latencyMs: num(answerRecord?.latencyMs) ?? 0,
    };
    calls.push(recorded);
    byRequest.set(request, recorded);
  }
  attachProgress(mine, byRequest);
  return { name: label(server), initialize: initialize ?? initializeFromSession(mine, server), lists, calls };
}

/** Progress notifications go with the latest request of their session whose id they name. */
function attachProgress(records: readonly LogRecord[], byRequest: Map<LogRecord, RecordedCall>): void {
  const latest = new Map<string, RecordedCall>();
  const key = (session: unknown, id: unknown): string => JSON.stringify([session ?? null, id ?? null]);
  for (const r of records) {
    const call = byRequest.get(r);
    if (call) latest.set(key(r.session, r.id), call);
    else if (r.method === "notifications/progress" && r.direction === "server_to_client") {
      const related = obj(r.related);
      const target = related ? latest.get(key(r.session, related.id)) : undefined;
      target?.progress.push({ atMs: num(related?.elapsedMs) ?? 0, params: obj(r.params) ?? {} });
    }
  }
}

export function listKey(method: string, params: Message | undefined): string {
  const cursor = str(params?.cursor);
  return cursor === null ? method : `${method} ${cursor}`;
}

function answerOf(r: LogRecord | undefined): { answer: RecordedCall["answer"]; problem: string | null } {
  if (!r) return { answer: null, problem: "the log holds no answer to it" };
  const field = r.kind === "error" ? "error" : "result";
  const value = r[field];
  const shaped = obj(value);
  if (value === undefined || shaped?.omitted === true) return { answer: null, problem: "its answer was not recorded (--payloads none)" };
  if (shaped?.truncated === true) return { answer: null, problem: "its answer was cut short in the log (record with --payloads full)" };
  return { answer: field === "error" ? { error: value } : { result: value }, problem: null };
}

/** Without the initialize response in the log: what the session record kept of it. */
function initializeFromSession(records: readonly LogRecord[], server: string): Message {
  const start = records.find((r) => r.event === "session" && r.phase === "start");
  if (!start) throw new UsageError(`the log holds no initialize of ${server}: nothing to answer a client's handshake with`);
  return {
    protocolVersion: str(start.protocolVersion) ?? "2025-03-26",
    capabilities: obj(obj(start.capabilities)?.server) ?? {},
    serverInfo: obj(start.serverInfo) ?? { name: server, version: "0" },
  };
}
