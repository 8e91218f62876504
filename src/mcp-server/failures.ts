import { buildCalls, type Call } from "../analysis/calls.js";
import { compileFilters } from "../saved-logs/filters.js";
import { parseQuery } from "../saved-logs/filter-query.js";
import { LIMITS, Page, parseCursor, ToolInputError } from "./bounded.js";
import { describeCall, type ExchangeView } from "./exchange.js";
import type { RecordIndex } from "./record-index.js";

export interface FailuresInput {
  query?: string;
  limit?: number;
  cursor?: string;
  maxBytes?: number;
  maxRecordBytes?: number;
}

export type FailureKind = "error" | "tool_error" | "denied" | "unanswered";

export interface Failure extends ExchangeView {
  failure: FailureKind;
  /** Position of the call's last record (the cursor's unit). */
  at: number;
}

export interface FailuresResult {
  failures: Failure[];
  truncated: boolean;
  nextCursor: string | null;
}

/**
 * `recent_failures`: calls that failed — a JSON-RPC error, a tool result with `isError`, a policy denial,
 * a request never answered — newest first (by their last record), each with its whole exchange.
 */
export async function recentFailures(index: RecordIndex, input: FailuresInput): Promise<FailuresResult> {
  const query = parseQuery(input.query ?? "");
  if (query.problems.length > 0 || query.text.length > 0 || query.dir.length > 0 || query.status.length > 0) {
    throw new ToolInputError(`query: only tail's tokens server: session: method: tool: decision: here (not ${[...query.problems, ...query.text, ...query.dir, ...query.status].join(" ")})`);
  }
  const matches = compileFilters(query.filters);
  const before = parseCursor(input.cursor) ?? Number.POSITIVE_INFINITY;
  const failing: { call: Call; kind: FailureKind; at: number }[] = [];
  for (const call of index.derived("calls", () => buildCalls(index.heads()))) {
    const kind = failureOf(call);
    if (kind === null || !call.records.some(matches)) continue;
    const at = index.heldOf(call.records.at(-1)!)?.index ?? -1;
    if (at < before) failing.push({ call, kind, at });
  }
  failing.sort((a, b) => b.at - a.at);
  const page = new Page<Failure>(input.limit ?? 10, input.maxBytes ?? LIMITS.maxBytes.default);
  const maxRecordBytes = input.maxRecordBytes ?? 1_500;
  let next: number | null = null;
  for (const f of failing) {
    if (!page.add({ failure: f.kind, at: f.at, ...(await describeCall(index, f.call, maxRecordBytes)) })) {
      next = f.at + 1;
      break;
    }
  }
  return { failures: page.items, truncated: next !== null, nextCursor: next === null ? null : String(next) };
}

function failureOf(call: Call): FailureKind | null {
  if (call.decision === "deny") return "denied";
  if (call.outcome === "error") return "error";
  if (call.outcome === "tool_error") return "tool_error";
  if (call.outcome === "unanswered") return "unanswered";
  return null;
}
