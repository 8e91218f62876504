import { buildCalls } from "./calls.js";
import { findConditions, type Condition, type Finding } from "./conditions.js";
import type { LoadedLogs } from "./read-logs.js";
import { splitList } from "../saved-logs/filters.js";

export interface CheckRequest {
  failOn: readonly Condition[];
  /** Globs, each value possibly a comma-separated list (as the command line gives them). */
  expectTools?: readonly string[] | undefined;
  forbidTools?: readonly string[] | undefined;
  maxLatencyMs?: number | undefined;
}

/** What `check` finds in loaded logs, and the names of everything it checked (conditions and options). */
export function runCheck(logs: LoadedLogs, o: CheckRequest): { findings: Finding[]; checked: string[] } {
  const options = {
    failOn: o.failOn,
    expectTools: splitList(o.expectTools),
    forbidTools: splitList(o.forbidTools),
    ...(o.maxLatencyMs !== undefined ? { maxLatencyMs: o.maxLatencyMs } : {}),
  };
  const findings = findConditions(logs, buildCalls(logs.records), options);
  const checked: string[] = [...o.failOn];
  if (options.expectTools.length > 0) checked.push("expect-tool");
  if (options.forbidTools.length > 0) checked.push("forbid-tool");
  if (options.maxLatencyMs !== undefined) checked.push("latency");
  return { findings, checked };
}
