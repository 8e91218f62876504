import { canonicalJson } from "../util/canonical-json.js";
import type { Call } from "./calls.js";
import { percentile } from "./percentiles.js";
import { appDigests, serverKey, serverNames, TOOL_FIELDS, toolDefinitions, type ServerTools } from "./tool-defs.js";
import type { LogRecord } from "../saved-logs/filters.js";

export interface DiffOptions {
  /** A median this many times slower (or faster) is a shift (default 2). */
  latencyRatio: number;
  /** …and only when it moved by at least this many ms (default 100). */
  latencyMinMs: number;
}

export type Change =
  | { type: "tool_added"; server: string; tool: string; regression: false }
  | { type: "tool_removed"; server: string; tool: string; regression: true }
  | { type: "tool_changed"; server: string; tool: string; field: string; before: unknown; after: unknown; regression: true }
  | { type: "app_changed"; server: string; uri: string; before: string; after: string; regression: true }
  | { type: "outcome_changed"; server: string; tool: string | null; method: string | null; argsHash: string | null; before: string; after: string; calls: [number, number]; replays?: [number, number]; regression: boolean }
  | { type: "latency_changed"; server: string; tool: string | null; method: string | null; beforeP50Ms: number; afterP50Ms: number; calls: [number, number]; regression: boolean };

export interface RunDiff {
  version: 1;
  changes: Change[];
  regressions: number;
  /** Servers whose tool listings one side could not read (payloads not recorded). */
  unreadable: { side: "a" | "b"; server: string; listings: number }[];
}

/** What changed from run A to run B: tool definitions, call outcomes, latencies. */
export function diffRuns(a: { records: readonly LogRecord[]; calls: readonly Call[] }, b: { records: readonly LogRecord[]; calls: readonly Call[] }, o: DiffOptions): RunDiff {
  const changes: Change[] = [];
  const toolsA = toolDefinitions(a.records);
  const toolsB = toolDefinitions(b.records);
  const appsA = appDigests(a.records);
  const appsB = appDigests(b.records);
  for (const key of sortedKeys(toolsA, toolsB)) changes.push(...diffTools(key, toolsA.get(key), toolsB.get(key)), ...diffApps(key, appsA.get(key), appsB.get(key)));
  for (const key of sortedKeys(appsA, appsB)) if (!toolsA.has(key) && !toolsB.has(key)) changes.push(...diffApps(key, appsA.get(key), appsB.get(key)));
  changes.push(...diffOutcomes(a, b), ...diffLatency(a, b, o));
  const unreadable = [
    ...[...toolsA.values()].filter((s) => s.unreadableListings > 0).map((s) => ({ side: "a" as const, server: s.key, listings: s.unreadableListings })),
    ...[...toolsB.values()].filter((s) => s.unreadableListings > 0).map((s) => ({ side: "b" as const, server: s.key, listings: s.unreadableListings })),
  ];
  return { version: 1, changes, regressions: changes.filter((c) => c.regression).length, unreadable };
}

export function diffTools(server: string, a: ServerTools | undefined, b: ServerTools | undefined): Change[] {
  // A server listed on one side only (or unreadable there) says nothing about its tools.
  if (!a || !b || a.tools.size === 0 || b.tools.size === 0) return [];
  const out: Change[] = [];
  for (const tool of [...new Set([...a.tools.keys(), ...b.tools.keys()])].sort()) {
    const before = a.tools.get(tool);
    const after = b.tools.get(tool);
    if (!before) out.push({ type: "tool_added", server, tool, regression: false });
    else if (!after) out.push({ type: "tool_removed", server, tool, regression: true });
    else {
      const fields = new Set<string>([...TOOL_FIELDS, ...Object.keys(before), ...Object.keys(after)]);
      fields.delete("name");
      for (const field of fields) {
        if (!sameJson(before[field], after[field])) out.push({ type: "tool_changed", server, tool, field, before: before[field], after: after[field], regression: true });
      }
    }
  }
  return out;
}

/** An app read on both sides whose HTML or `_meta.ui` differs (by the digest its records carry). */
function diffApps(server: string, a: Map<string, string> | undefined, b: Map<string, string> | undefined): Change[] {
  if (!a || !b) return [];
  const out: Change[] = [];
  for (const [uri, before] of [...a].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const after = b.get(uri);
    if (after !== undefined && after !== before) out.push({ type: "app_changed", server, uri, before, after, regression: true });
  }
  return out;
}

const OUTCOME_RANK: Record<string, number> = { ok: 0, cancelled: 0, tool_error: 1, error: 2, unanswered: 3, open: 3 };
const DECISION_RANK: Record<string, number> = { allow: 0, flag: 1, deny: 2 };

/** A call's result as compared between runs: `ok`, `error`, … then the policy's verdict when not allow. */
function verdict(c: Call): { rank: number; text: string } {
  const outcome = c.outcome === "tool_error" ? "error (isError)" : c.outcome === "open" ? "unanswered" : c.outcome;
  return {
    rank: (OUTCOME_RANK[c.outcome] ?? 0) * 3 + (DECISION_RANK[c.decision] ?? 0),
    text: c.decision === "allow" ? outcome : `${outcome}, ${c.decision}`,
  };
}

function diffOutcomes(a: { records: readonly LogRecord[]; calls: readonly Call[] }, b: { records: readonly LogRecord[]; calls: readonly Call[] }): Change[] {
  const groupsA = byArgs(a);
  const groupsB = byArgs(b);
  const out: Change[] = [];
  for (const [key, callsA] of groupsA) {
    const callsB = groupsB.get(key);
    if (!callsB) continue;
    const worst = (calls: Call[]) => calls.map(verdict).reduce((x, y) => (y.rank > x.rank ? y : x));
    const before = worst(callsA);
    const after = worst(callsB);
    if (before.rank === after.rank) continue;
    const c = callsA[0]!;
    const replays: [number, number] = [callsA.filter((x) => x.replayOf !== null).length, callsB.filter((x) => x.replayOf !== null).length];
    out.push({
      type: "outcome_changed",
      server: JSON.parse(key)[0] as string,
      tool: c.tool,
      method: c.method,
      argsHash: c.argsHash,
      before: before.text,
      after: after.text,
      calls: [callsA.length, callsB.length],
      ...(replays[0] + replays[1] > 0 ? { replays } : {}),
      regression: after.rank > before.rank,
    });
  }
  return out;
}

/** tools/call calls by server, tool and arguments (argsHash). */
function byArgs(run: { records: readonly LogRecord[]; calls: readonly Call[] }): Map<string, Call[]> {
  const names = serverNames(run.records);
  const out = new Map<string, Call[]>();
  for (const c of run.calls) {
    if (c.method !== "tools/call" || c.argsHash === null) continue;
    const key = JSON.stringify([serverKey(c.server, names), c.tool, c.argsHash]);
    const list = out.get(key);
    if (list) list.push(c);
    else out.set(key, [c]);
  }
  return out;
}

function diffLatency(a: { records: readonly LogRecord[]; calls: readonly Call[] }, b: { records: readonly LogRecord[]; calls: readonly Call[] }, o: DiffOptions): Change[] {
  const medians = (run: typeof a) => {
    const names = serverNames(run.records);
    const groups = new Map<string, number[]>();
    for (const c of run.calls) {
      if (c.latencyMs === null || c.method === null) continue;
      const key = JSON.stringify([serverKey(c.server, names), c.method, c.tool]);
      const list = groups.get(key);
      if (list) list.push(c.latencyMs);
      else groups.set(key, [c.latencyMs]);
    }
    return groups;
  };
  const la = medians(a);
  const lb = medians(b);
  const out: Change[] = [];
  for (const [key, valuesA] of la) {
    const valuesB = lb.get(key);
    if (!valuesB) continue;
    const before = percentile(valuesA, 50)!;
    const after = percentile(valuesB, 50)!;
    const slower = after >= before * o.latencyRatio && after - before >= o.latencyMinMs;
    const faster = before >= after * o.latencyRatio && before - after >= o.latencyMinMs;
    if (!slower && !faster) continue;
    const [server, method, tool] = JSON.parse(key) as [string, string, string | null];
    out.push({ type: "latency_changed", server, method, tool, beforeP50Ms: before, afterP50Ms: after, calls: [valuesA.length, valuesB.length], regression: slower });
  }
  return out;
}

function sortedKeys<T>(...maps: Map<string, T>[]): string[] {
  return [...new Set(maps.flatMap((m) => [...m.keys()]))].sort();
}

/** Equal as JSON, key order aside (logged values are plain JSON; anything odd compares by its text). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return JSON.stringify(a) === JSON.stringify(b);
  }
}
