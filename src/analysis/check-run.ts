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
  /** Token gates (estimates): the tokenizer is loaded only when one is asked for. */
  maxListTokens?: number | undefined;
  maxResultTokens?: number | undefined;
}

/** What `check` finds in loaded logs, and the names of everything it checked (conditions and options). */
export async function runCheck(logs: LoadedLogs, o: CheckRequest): Promise<{ findings: Finding[]; checked: string[] }> {
  const options = {
    failOn: o.failOn,
    expectTools: splitList(o.expectTools),
    forbidTools: splitList(o.forbidTools),
    ...(o.maxLatencyMs !== undefined ? { maxLatencyMs: o.maxLatencyMs } : {}),
  };
  const calls = buildCalls(logs.records);
  const findings = findConditions(logs, calls, options);
  const checked: string[] = [...o.failOn];
  if (options.expectTools.length > 0) checked.push("expect-tool");
  if (options.forbidTools.length > 0) checked.push("forbid-tool");
  if (options.maxLatencyMs !== undefined) checked.push("latency");
  if (o.maxListTokens !== undefined || o.maxResultTokens !== undefined) {
    const [{ loadTokenCounter }, { tokenFindings }] = await Promise.all([import("../tokens/token-counter.js"), import("../tokens/token-gates.js")]);
    const limits = { ...(o.maxListTokens !== undefined ? { maxListTokens: o.maxListTokens } : {}), ...(o.maxResultTokens !== undefined ? { maxResultTokens: o.maxResultTokens } : {}) };
    findings.push(...tokenFindings(logs.records, calls, await loadTokenCounter(), limits));
    if (o.maxListTokens !== undefined) checked.push("list-tokens");
    if (o.maxResultTokens !== undefined) checked.push("result-tokens");
  }
  return { findings, checked };
}
