import type { Call } from "./calls.js";
import type { GroupBy } from "./names.js";
import { percentile, sum } from "./percentiles.js";

export { GROUP_BY, type GroupBy } from "./names.js";

/** The figures of one group of calls (the `--json` contract: docs/analysis.md). */
export interface GroupStats {
  /** What the group is: `{ method, tool }`, `{ method }`, `{ server }` or `{ server, session }`. */
  key: Record<string, string | null>;
  calls: number;
  ok: number;
  /** JSON-RPC errors plus tool results with `isError: true`. */
  errors: number;
  rpcErrors: number;
  toolErrors: number;
  denied: number;
  flagged: number;
  /** Never answered: an `unanswered` record, or still waiting when the log ends. */
  unanswered: number;
  cancelled: number;
  /** Calls that took more than one round (multi-round requests). */
  multiRound: number;
  /** Calls made by `mcp-wiretap replay` (their records carry `replayOf`); counted in `calls` too. */
  replays: number;
  latencyMs: { count: number; p50: number | null; p95: number | null; p99: number | null; max: number | null };
  requestBytes: { total: number; p95: number | null };
  responseBytes: { total: number; p95: number | null };
  firstSeen: string | null;
  lastSeen: string | null;
}

export interface StatsReport {
  version: 1;
  by: GroupBy;
  groups: GroupStats[];
  totals: GroupStats;
}

export function keyOf(call: Call, by: GroupBy): Record<string, string | null> {
  switch (by) {
    case "tool":
      return { method: call.method, tool: call.tool };
    case "method":
      return { method: call.method };
    case "server":
      return { server: call.server };
    case "session":
      return { server: call.server, session: call.session };
  }
}

/** Per-group figures, groups sorted by calls (most first), then by key. */
export function computeStats(calls: readonly Call[], by: GroupBy): StatsReport {
  const groups = new Map<string, { key: Record<string, string | null>; calls: Call[] }>();
  for (const call of calls) {
    const key = keyOf(call, by);
    const id = JSON.stringify(key);
    const group = groups.get(id) ?? { key, calls: [] };
    group.calls.push(call);
    groups.set(id, group);
  }
  const out = [...groups.entries()]
    .map(([id, g]) => ({ id, stats: summarize(g.key, g.calls) }))
    .sort((a, b) => b.stats.calls - a.stats.calls || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((g) => g.stats);
  return { version: 1, by, groups: out, totals: summarize({}, calls) };
}

export function summarize(key: Record<string, string | null>, calls: readonly Call[]): GroupStats {
  const count = (match: (c: Call) => boolean): number => calls.filter(match).length;
  const latencies = calls.map((c) => c.latencyMs).filter((v): v is number => v !== null);
  const requestBytes = calls.map((c) => c.requestBytes);
  const responseBytes = calls.filter((c) => c.outcome !== "unanswered" && c.outcome !== "open").map((c) => c.responseBytes);
  const times = calls.flatMap((c) => [c.firstSeen, c.lastSeen]).filter((t): t is string => t !== null).sort();
  const rpcErrors = count((c) => c.outcome === "error");
  const toolErrors = count((c) => c.outcome === "tool_error");
  return {
    key,
    calls: calls.length,
    ok: count((c) => c.outcome === "ok"),
    errors: rpcErrors + toolErrors,
    rpcErrors,
    toolErrors,
    denied: count((c) => c.decision === "deny"),
    flagged: count((c) => c.decision === "flag"),
    unanswered: count((c) => c.outcome === "unanswered" || c.outcome === "open"),
    cancelled: count((c) => c.outcome === "cancelled"),
    multiRound: count((c) => c.rounds > 1),
    replays: count((c) => c.replayOf !== null),
    latencyMs: {
      count: latencies.length,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: latencies.length === 0 ? null : latencies.reduce((a, b) => Math.max(a, b)),
    },
    requestBytes: { total: sum(requestBytes), p95: percentile(requestBytes, 95) },
    responseBytes: { total: sum(responseBytes), p95: percentile(responseBytes, 95) },
    firstSeen: times[0] ?? null,
    lastSeen: times.at(-1) ?? null,
  };
}
