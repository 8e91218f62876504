import type { RecordFilters } from "./filters.js";

/**
 * The filter box: `tail`'s tokens (`server:` `session:` `method:` `tool:` `decision:`, globs and
 * comma lists as there), `dir:` and `status:`, and free text (every other word, matched in the record).
 * Tokens of one kind are alternatives; different kinds must all match.
 */
export interface ParsedQuery {
  filters: RecordFilters;
  dir: string[];
  status: string[];
  text: string[];
  problems: string[];
}

const TAIL_KEYS = ["server", "session", "method", "tool", "decision"] as const;
const DIRS: Record<string, string> = {
  client: "client_to_server",
  c2s: "client_to_server",
  client_to_server: "client_to_server",
  server: "server_to_client",
  s2c: "server_to_client",
  server_to_client: "server_to_client",
};
const STATUSES = new Set(["ok", "error", "pending", "denied", "cancelled"]);

export function parseQuery(input: string): ParsedQuery {
  const q: ParsedQuery = { filters: {}, dir: [], status: [], text: [], problems: [] };
  for (const token of input.trim().split(/\s+/).filter(Boolean)) {
    const colon = token.indexOf(":");
    const key = colon > 0 ? token.slice(0, colon).toLowerCase() : "";
    const value = colon > 0 ? token.slice(colon + 1) : "";
    if ((TAIL_KEYS as readonly string[]).includes(key) && value !== "") {
      const k = key as (typeof TAIL_KEYS)[number];
      (q.filters[k] as string[] | undefined) = [...((q.filters[k] as string[] | undefined) ?? []), value];
    } else if (key === "dir" && value !== "") {
      for (const v of value.split(",")) {
        const d = DIRS[v.toLowerCase()];
        if (d) q.dir.push(d);
        else q.problems.push(`dir:${v} (client or server)`);
      }
    } else if (key === "status" && value !== "") {
      for (const v of value.split(",")) {
        if (STATUSES.has(v.toLowerCase())) q.status.push(v.toLowerCase());
        else q.problems.push(`status:${v} (ok, error, pending, cancelled or denied)`);
      }
    } else {
      q.text.push(token);
    }
  }
  return q;
}
