import { compileFilters, hasFilters } from "../saved-logs/filters.js";
import type { Judged } from "../mcp/rpc-event.js";
import { parseQuery } from "../saved-logs/filter-query.js";
import { UsageError } from "../util/usage-error.js";

/** Which judged messages `--intercept FILTER` holds. */
export type InterceptFilter = (judged: Judged) => boolean;

/**
 * `--intercept FILTER`: tail's tokens (`tool:echo`, `method:tools/*`, `server:`, `session:`, `decision:`) and
 * `dir:client|server`, as the UI's filter box reads them. Only messages of JSON-RPC (requests, notifications
 * and answers) are held: an invalid one is never forwarded as is in enforce mode, and not worth a person's
 * time in monitor mode.
 */
export function parseInterceptFilter(text: string): InterceptFilter {
  const q = parseQuery(text);
  const bad = [...q.problems, ...q.text, ...q.status.map((s) => `status:${s}`)];
  if (bad.length > 0) {
    throw new UsageError(`--intercept ${JSON.stringify(text)}: only the tokens server: session: method: tool: decision: dir: (not ${bad.join(" ")})`);
  }
  if (!hasFilters(q.filters) && q.dir.length === 0) throw new UsageError(`--intercept needs a filter, e.g. 'tool:echo' or 'method:tools/call' ('method:*' holds everything)`);
  const matches = compileFilters(q.filters);
  const dirs = new Set(q.dir);
  return ({ event, decision }) => {
    if (event.kind === "invalid" || event.kind === "unanswered") return false;
    if (dirs.size > 0 && !dirs.has(event.direction)) return false;
    return matches({
      event: "rpc",
      server: event.server,
      session: event.session,
      method: event.method,
      tool: event.tool,
      ...(event.related ? { related: { method: event.related.method, tool: event.related.tool } } : {}),
      decision: { action: decision.action },
    });
  };
}
