import { hostOf } from "../policy/judged-message.js";
import { obj, str, type LogRecord } from "../saved-logs/filters.js";

/** The parts of a tool definition `diff` compares, one by one. */
export const TOOL_FIELDS = ["title", "description", "inputSchema", "outputSchema", "annotations"] as const;

export interface ServerTools {
  /** How the server is matched between two logs: `serverInfo.name@host` when the log names it, else `host:port`. */
  key: string;
  /** Every `host:port` seen under this key. */
  addresses: string[];
  tools: Map<string, Record<string, unknown>>;
  /** tools/list results that could not be read (payloads truncated or omitted: `--payloads none`). */
  unreadableListings: number;
}

/** The name a server gives itself at initialize, per `host:port` (from `session` start records). */
export function serverNames(records: readonly LogRecord[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const r of records) {
    const name = str(obj(r.serverInfo)?.name);
    if (r.event === "session" && r.phase === "start" && typeof r.server === "string" && name !== null) names.set(r.server, name);
  }
  return names;
}

export function serverKey(server: string | null, names: Map<string, string>): string {
  if (server === null) return "(unknown server)";
  const name = names.get(server);
  return name === undefined ? server : `${name}@${hostOf(server)}`;
}

/**
 * The tool definitions of each server, from the `tools/list` results in the log (every page; a tool
 * listed again takes its latest definition). Needs payloads in the log: a result logged as a truncated
 * preview or omitted (`--payloads none`) is counted in `unreadableListings` instead.
 */
export function toolDefinitions(records: readonly LogRecord[]): Map<string, ServerTools> {
  const names = serverNames(records);
  const out = new Map<string, ServerTools>();
  for (const r of records) {
    if (r.event !== "rpc" || r.kind !== "response" || r.method !== "tools/list") continue;
    const server = str(r.server);
    const key = serverKey(server, names);
    let entry = out.get(key);
    if (!entry) {
      entry = { key, addresses: [], tools: new Map(), unreadableListings: 0 };
      out.set(key, entry);
    }
    if (server !== null && !entry.addresses.includes(server)) entry.addresses.push(server);
    const result = obj(r.result);
    if (!result || !Array.isArray(result.tools)) {
      entry.unreadableListings++;
      continue;
    }
    for (const tool of result.tools) {
      const t = obj(tool);
      const name = str(t?.name);
      if (t && name !== null) entry.tools.set(name, t);
    }
  }
  return out;
}

/**
 * The MCP Apps each server served, by URI: the digest of the last content read (the `apps` marks of
 * `resources/read` answers, written in every payload mode).
 */
export function appDigests(records: readonly LogRecord[]): Map<string, Map<string, string>> {
  const names = serverNames(records);
  const out = new Map<string, Map<string, string>>();
  for (const r of records) {
    if (r.event !== "rpc" || r.kind !== "response" || r.method !== "resources/read" || !Array.isArray(r.apps)) continue;
    const key = serverKey(str(r.server), names);
    const apps = out.get(key) ?? new Map<string, string>();
    out.set(key, apps);
    for (const mark of r.apps) {
      const uri = str(obj(mark)?.uri);
      const sha256 = str(obj(mark)?.sha256);
      if (uri !== null && sha256 !== null) apps.set(uri, sha256);
    }
  }
  return out;
}
