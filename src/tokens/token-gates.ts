/** `check --max-list-tokens N` and `--max-result-tokens N`: a finding per tools/list, or per tool result, past N. */
import type { Call } from "../analysis/calls.js";
import { blank, finding, type Finding } from "../analysis/conditions.js";
import { obj } from "../saved-logs/filters.js";
import { TOKEN_ENCODING, type CountTokens } from "./token-counter.js";
import { tokenCosts } from "./token-costs.js";
import type { LogRecord } from "../saved-logs/filters.js";

export interface TokenLimits {
  maxListTokens?: number;
  maxResultTokens?: number;
}

export function tokenFindings(records: readonly LogRecord[], calls: readonly Call[], count: CountTokens, limits: TokenLimits): Finding[] {
  const out: Finding[] = [];
  const estimated = `estimated with ${TOKEN_ENCODING}`;
  if (limits.maxListTokens !== undefined) {
    for (const list of tokenCosts(records, [], count).lists) {
      if (list.total <= limits.maxListTokens) continue;
      out.push({ ...blank("list-tokens"), server: list.server, method: "tools/list", reason: `tools/list of ${list.server} is ${list.total} tokens (over --max-list-tokens ${limits.maxListTokens}; ${estimated})` });
    }
  }
  if (limits.maxResultTokens !== undefined) {
    for (const call of calls) {
      if (call.method !== "tools/call") continue;
      const answer = call.records.findLast((r) => r.kind === "response");
      const result = obj(answer?.result);
      if (!answer || !result || result.truncated === true || result.omitted === true) continue;
      const tokens = count(JSON.stringify(result));
      if (tokens > limits.maxResultTokens) {
        out.push({ ...finding("result-tokens", answer, `result is ${tokens} tokens (over --max-result-tokens ${limits.maxResultTokens}; ${estimated})`), id: call.id, method: call.method, tool: call.tool });
      }
    }
  }
  return out;
}
