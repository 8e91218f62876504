import { hostOf } from "../policy/judged-message.js";
import { globToRegExp } from "../util/glob.js";

export type LogRecord = Record<string, unknown>;

export const DECISIONS = ["allow", "flag", "deny"] as const;
export type DecisionAction = (typeof DECISIONS)[number];

/**
 * What `tail` and `export` select. Each list is a set of alternatives (any may match); the lists given are
 * all required. Every value may also be a comma-separated list (`--tool echo,get-sum` = `--tool echo --tool
 * get-sum`). A record without the field a filter looks at does not match that filter.
 */
export interface RecordFilters {
  /** Globs on the destination `host:port` or its host alone (`*.example.com`). */
  server?: string[];
  /** Prefixes of the session id (of a legacy session also its `sessionId` value). */
  session?: string[];
  /** Globs on the JSON-RPC method (of a progress or cancel notification also the request's method). */
  method?: string[];
  /** Globs on the tool name (of a progress or cancel notification also the request's tool). */
  tool?: string[];
  /** Policy decisions. */
  decision?: DecisionAction[];
}

/** True when any filter is given (the command then says so when none matched). */
export function hasFilters(f: RecordFilters): boolean {
  return [f.server, f.session, f.method, f.tool, f.decision].some((v) => (v?.length ?? 0) > 0);
}

/** `["a,b", "c"]` → `["a", "b", "c"]`, blanks dropped. */
export function splitList(values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v !== "");
}

/** The predicate for `filters`; with none given, every record matches. */
export function compileFilters(filters: RecordFilters): (record: LogRecord) => boolean {
  const checks: ((r: LogRecord) => boolean)[] = [];
  const servers = splitList(filters.server).map(globToRegExp);
  if (servers.length > 0) {
    checks.push((r) => {
      const server = serverOf(r);
      if (server === null) return false;
      const host = hostOf(server);
      return servers.some((re) => re.test(server) || re.test(host));
    });
  }
  const sessions = splitList(filters.session);
  if (sessions.length > 0) {
    checks.push((r) => {
      const ids = sessionIdsOf(r);
      return ids.some((id) => sessions.some((prefix) => id.startsWith(prefix)));
    });
  }
  // Of a progress or cancel notification, the request's method and tool count too.
  for (const field of ["method", "tool"] as const) {
    const globs = splitList(filters[field]).map(globToRegExp);
    if (globs.length === 0) continue;
    checks.push((r) => {
      if (r.event !== "rpc") return false;
      const candidates = [str(r[field]), str(related(r)?.[field])].filter((v): v is string => v !== null);
      return candidates.some((v) => globs.some((re) => re.test(v)));
    });
  }
  const decisions = new Set(splitList(filters.decision).map((d) => d.toLowerCase()));
  if (decisions.size > 0) {
    checks.push((r) => {
      const action = str((r.decision as LogRecord | undefined)?.action);
      return action !== null && decisions.has(action);
    });
  }
  return (record) => checks.every((check) => check(record));
}

/** The destination a record is about: `server`, or the `target` of a refused CONNECT. */
export function serverOf(r: LogRecord): string | null {
  return str(r.server) ?? str(r.target);
}

/** `host:port` → host (IPv6 `[::1]:443` → `::1`), as the policy reads it. */
export { hostOf } from "../policy/judged-message.js";

/**
 * The session ids a record carries: its `session` (and for a legacy endpoint like
 * `/message?sessionId=abc` also `abc`), or an http record's `Mcp-Session-Id` request header (or the
 * `sessionId` in its path).
 */
export function sessionIdsOf(r: LogRecord): string[] {
  const ids: string[] = [];
  const session = str(r.session) ?? str(header(r.requestHeaders, "mcp-session-id"));
  if (session !== null) {
    ids.push(session);
    const legacy = legacySessionId(session);
    if (legacy !== null) ids.push(legacy);
  } else if (r.event === "http" && typeof r.path === "string") {
    // A legacy POST names its session in the endpoint's query.
    const legacy = legacySessionId(r.path);
    if (legacy !== null) ids.push(legacy);
  }
  return ids;
}

/** The `sessionId` (or `session_id`) query value of a legacy endpoint path. */
export function legacySessionId(session: string): string | null {
  const q = session.indexOf("?");
  if (q < 0) return null;
  const params = new URLSearchParams(session.slice(q + 1));
  return params.get("sessionId") ?? params.get("session_id") ?? params.get("session");
}

export function header(headers: unknown, name: string): string | undefined {
  if (headers === null || typeof headers !== "object") return undefined;
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() !== name) continue;
    if (typeof value === "string") return value;
    if (Array.isArray(value)) return value.map(String).join(", ");
  }
  return undefined;
}

function related(r: LogRecord): LogRecord | undefined {
  return obj(r.related);
}

/** Field readers for parsed records: a value of the wrong type reads as absent. */
export function obj(v: unknown): LogRecord | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as LogRecord) : undefined;
}

export function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

export function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** Whether an exchange went over HTTPS: intercepted (mitm), or with TLS to the server. */
export function isHttps(r: LogRecord): boolean {
  const tls = obj(r.tls);
  return r.mode === "mitm" || (tls !== undefined && tls.server !== null && tls.server !== undefined);
}

/** The names of the rules a policy decision cites, in order. */
export function ruleNames(decision: LogRecord): string[] {
  return Array.isArray(decision.rules) ? decision.rules.map((x) => str(obj(x)?.name)).filter((x): x is string => x !== null) : [];
}

/** A logged error as `code: message` (either may be missing). */
export function errorText(error: LogRecord): string {
  return [str(error.code), str(error.message)].filter(Boolean).join(": ");
}
