import { PassThrough } from "node:stream";
import { checkText } from "../analysis/check-report.js";
import { runCheck } from "../analysis/check-run.js";
import { CONDITIONS, DEFAULT_FAIL_ON, type Condition, type Finding } from "../analysis/conditions.js";
import type { GroupBy } from "../analysis/names.js";
import { loadLogs } from "../analysis/read-logs.js";
import { selectCalls } from "../analysis/select.js";
import { computeStats, type GroupStats, type StatsReport } from "../analysis/stats.js";
import { buildCalls, type Call } from "../analysis/calls.js";
import { compileFilters, splitList } from "../saved-logs/filters.js";
import { parseQuery } from "../saved-logs/filter-query.js";
import { LIMITS, ToolInputError } from "./bounded.js";
import type { ServedLogs } from "./served-logs.js";

/**
 * `stats` and `check` run the commands' functions over the served files, so their numbers are the commands'
 * numbers over the same files at the moment of the call. `check` reads the files from disk as the command
 * does (its conditions need whole records, the audit chain its lines).
 */
export interface StatsInput {
  by?: GroupBy;
  query?: string;
  limit?: number;
}

export interface StatsResult extends Omit<StatsReport, "groups"> {
  groups: GroupStats[];
  files: string[];
  records: number;
  truncated: boolean;
  omitted: number;
}

/**
 * `stats` counts calls only, and a record's head holds every field the call builder reads: while the index
 * holds every record of the files (nothing dropped past its bounds), the held heads give the command's
 * numbers without reading the files again; otherwise the files are read as the command reads them.
 */
export async function statsOf(logs: ServedLogs, input: StatsInput): Promise<StatsResult> {
  const query = parseQuery(input.query ?? "");
  if (query.problems.length > 0 || query.text.length > 0 || query.dir.length > 0 || query.status.length > 0) throw new ToolInputError("query: only tail's tokens server: session: method: tool: decision: (as `stats` takes them)");
  const files = logs.files();
  const index = logs.index;
  let calls: Call[];
  let records: number;
  if (index.dropped === 0) {
    const matches = compileFilters(query.filters);
    calls = index.derived("calls", () => buildCalls(index.heads())).filter((call) => call.records.some(matches));
    records = index.size;
  } else {
    const loaded = await load(files, false);
    calls = selectCalls(loaded.records, query.filters);
    records = loaded.records.length;
  }
  const report = computeStats(calls, input.by ?? "tool");
  const limit = input.limit ?? LIMITS.limit.max;
  return { ...report, groups: report.groups.slice(0, limit), files, records, truncated: report.groups.length > limit, omitted: Math.max(0, report.groups.length - limit) };
}

export interface CheckInput {
  failOn?: string[];
  expectTools?: string[];
  forbidTools?: string[];
  maxLatencyMs?: number;
  limit?: number;
}

export interface CheckResult {
  ok: boolean;
  checked: string[];
  records: number;
  files: string[];
  counts: Record<string, number>;
  findings: Finding[];
  total: number;
  truncated: boolean;
  /** The command's summary line. */
  summary: string;
}

export async function checkOf(files: readonly string[], input: CheckInput): Promise<CheckResult> {
  const failOn = conditionsOf(input.failOn);
  const logs = await load(files, true);
  const { findings, checked } = await runCheck(logs, { failOn, expectTools: input.expectTools, forbidTools: input.forbidTools, maxLatencyMs: input.maxLatencyMs });
  const counts: Record<string, number> = {};
  for (const f of findings) counts[f.condition] = (counts[f.condition] ?? 0) + 1;
  const limit = input.limit ?? 100;
  const text = checkText(findings, checked, logs.records.length);
  return {
    ok: findings.length === 0,
    checked,
    records: logs.records.length,
    files: [...files],
    counts,
    // The finding's `id` is a JSON-RPC id (string, number or null): kept as it is.
    findings: findings.slice(0, limit),
    total: findings.length,
    truncated: findings.length > limit,
    summary: text.trimEnd().split("\n").at(-1)!,
  };
}

function conditionsOf(values: readonly string[] | undefined): Condition[] {
  if (values === undefined) return [...DEFAULT_FAIL_ON];
  const list = splitList(values).map((v) => v.toLowerCase());
  if (list.includes("all")) return [...CONDITIONS];
  for (const v of list) if (!(CONDITIONS as readonly string[]).includes(v)) throw new ToolInputError(`failOn: unknown condition ${JSON.stringify(v)}: use ${CONDITIONS.join(", ")} or all`);
  return [...new Set(list as Condition[])];
}

async function load(files: readonly string[], verifyChain: boolean) {
  if (files.length === 0) throw new ToolInputError("no log has been read yet");
  // Standard input is the MCP channel (stdio): never read; every name here is a file this server serves.
  const noStdin = new PassThrough();
  noStdin.end();
  return loadLogs(files, noStdin, { verifyChain });
}
