import { buildCalls } from "../analysis/calls.js";
import { compileFilters, obj, str, type LogRecord } from "../saved-logs/filters.js";
import { parseQuery } from "../saved-logs/filter-query.js";
import { LIMITS, Page, ToolInputError } from "./bounded.js";
import type { RecordIndex } from "./record-index.js";

export interface SessionSummary {
  /** The session id as logged; traffic with none (before `initialize` is answered elsewhere, stateless) is `none:<server>`. */
  id: string;
  uri: string;
  server: string | null;
  serverName: string | null;
  serverVersion: string | null;
  client: string | null;
  clientVersion: string | null;
  protocolVersion: string | null;
  transport: string | null;
  firstSeen: string | null;
  lastSeen: string | null;
  /** Why it ended (`session` end record, or a stdio launch's stop), or null while it may go on. */
  ended: string | null;
  messages: number;
  calls: number;
  errors: number;
  denials: number;
  unanswered: number;
  files: string[];
}

export interface SessionsResult {
  sessions: SessionSummary[];
  total: number;
  truncated: boolean;
  nextCursor: string | null;
}

/** The session a record belongs to: its own id, else the session its exchange opened, else `none:<server>`. */
export function sessionKeyer(heads: readonly LogRecord[]): (h: LogRecord) => string | null {
  const byFlow = new Map<string, string>();
  for (const h of heads) if (typeof h.flow === "string" && typeof h.session === "string" && !byFlow.has(h.flow)) byFlow.set(h.flow, h.session);
  return (h) => {
    const own = str(h.session) ?? str(obj(h.requestHeaders)?.["mcp-session-id"]);
    if (own !== null) return own;
    const viaFlow = typeof h.flow === "string" ? byFlow.get(h.flow) : undefined;
    if (viaFlow !== undefined) return viaFlow;
    const server = str(h.server) ?? str(h.target);
    return server === null ? null : `none:${server}`;
  };
}

/** The held records' `sessionKeyer`, built once per state of the index (each call would rebuild its table). */
export function sessionsOf(index: RecordIndex): (h: LogRecord) => string | null {
  return index.derived("sessions", () => sessionKeyer(index.heads()));
}

export function sessionUri(id: string): string {
  return `wiretap://session/${encodeURIComponent(id)}`;
}

/** `list_sessions`: every session of the served logs, the most recently active first. */
export function listSessions(index: RecordIndex, input: { query?: string; limit?: number; cursor?: string; maxBytes?: number }): SessionsResult {
  const query = parseQuery(input.query ?? "");
  if (query.problems.length > 0 || query.text.length > 0 || query.dir.length > 0 || query.status.length > 0) throw new ToolInputError("query: only tail's tokens server: session: method: tool: decision: here");
  const matches = compileFilters(query.filters);
  const keyOf = sessionsOf(index);
  const sessions = new Map<string, SessionSummary & { last: number; matched: boolean }>();
  const get = (key: string, h: LogRecord): SessionSummary & { last: number; matched: boolean } => {
    let s = sessions.get(key);
    if (!s) {
      s = { id: key, uri: sessionUri(key), server: str(h.server), serverName: null, serverVersion: null, client: null, clientVersion: null, protocolVersion: null, transport: null, firstSeen: null, lastSeen: null, ended: null, messages: 0, calls: 0, errors: 0, denials: 0, unanswered: 0, files: [], last: 0, matched: false };
      sessions.set(key, s);
    }
    return s;
  };
  for (const held of index.all()) {
    const h = held.head;
    const key = keyOf(h);
    if (key === null || (h.event !== "rpc" && h.event !== "session" && h.event !== "start" && h.event !== "stop")) continue;
    if (h.event === "start" && h.transport !== "stdio") continue;
    if (h.event === "stop" && typeof h.session !== "string") continue;
    const s = get(key, h);
    s.matched ||= matches(h);
    s.last = held.index;
    s.firstSeen ??= str(h.time);
    s.lastSeen = str(h.time) ?? s.lastSeen;
    s.transport ??= str(h.transport);
    s.protocolVersion = str(h.protocolVersion) ?? s.protocolVersion;
    if (!s.files.includes(held.file)) s.files.push(held.file);
    if (h.event === "rpc") s.messages++;
    if (h.event === "session" && h.phase === "start") {
      s.serverName = str(obj(h.serverInfo)?.name);
      s.serverVersion = str(obj(h.serverInfo)?.version);
      s.client = str(obj(h.clientInfo)?.name);
      s.clientVersion = str(obj(h.clientInfo)?.version);
    }
    if (h.event === "session" && h.phase === "end") s.ended = str(h.reason) ?? "ended";
    if (h.event === "stop") s.ended = str(h.reason) ?? "stopped";
  }
  for (const call of index.derived("calls", () => buildCalls(index.heads()))) {
    const key = keyOf(call.records[0]!);
    const s = key === null ? undefined : sessions.get(key);
    if (!s) continue;
    s.calls++;
    if (call.outcome === "error" || call.outcome === "tool_error") s.errors++;
    if (call.decision === "deny") s.denials++;
    if (call.outcome === "unanswered") s.unanswered++;
  }
  const ordered = [...sessions.values()].filter((s) => s.matched).sort((a, b) => b.last - a.last);
  const offset = input.cursor === undefined ? 0 : Number(input.cursor);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new ToolInputError("cursor: not one this server gave");
  const page = new Page<SessionSummary>(input.limit ?? LIMITS.limit.default, input.maxBytes ?? LIMITS.maxBytes.default);
  let i = offset;
  for (; i < ordered.length; i++) {
    const { last: _last, matched: _matched, ...summary } = ordered[i]!;
    if (!page.add(summary)) break;
  }
  return { sessions: page.items, total: ordered.length, truncated: i < ordered.length, nextCursor: i < ordered.length ? String(i) : null };
}
