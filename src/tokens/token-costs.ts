/**
 * What a server costs in a model's context, from a recorded log: each tool definition of its `tools/list`
 * (paid before any call), the list's total, and each tool's call arguments and results. Definitions and
 * results are counted as the JSON the server sent; a payload the log holds only as a preview or not at all
 * (`--payloads`) cannot be counted and is said to be so.
 */
import type { Call } from "../analysis/calls.js";
import { percentile, sum } from "../analysis/percentiles.js";
import { toolDefinitions } from "../analysis/tool-defs.js";
import { printable } from "../saved-logs/color.js";
import { clip } from "../saved-logs/layout.js";
import { obj, type LogRecord } from "../saved-logs/filters.js";
import { TOKEN_ENCODING, type CountTokens } from "./token-counter.js";

export interface ListTokens {
  /** `serverInfo.name@host`, or `host:port` (as `diff` names servers). */
  server: string;
  /** Every `host:port` the listings came from. */
  addresses: string[];
  tools: { name: string; tokens: number }[];
  /** The definitions' tokens together. */
  total: number;
  /** tools/list results the log does not hold whole. */
  unreadableListings: number;
}

export interface ToolTokens {
  tool: string;
  calls: number;
  /** Calls whose arguments / result the log holds whole (counted). */
  counted: { arguments: number; results: number };
  arguments: { mean: number | null; max: number | null };
  results: { mean: number | null; p95: number | null; max: number | null };
}

export interface TokenReport {
  encoding: typeof TOKEN_ENCODING;
  estimate: true;
  lists: ListTokens[];
  tools: ToolTokens[];
}

/** A result or arguments value the log holds whole (not a truncated preview or an omitted stub). */
function whole(value: unknown): value is Record<string, unknown> {
  const o = obj(value);
  return o !== undefined && o.truncated !== true && o.omitted !== true;
}

export function tokenCosts(records: readonly LogRecord[], calls: readonly Call[], count: CountTokens): TokenReport {
  const measured = calls.map((call) => callTokens(call, count)).filter((c) => c !== null);
  return { encoding: TOKEN_ENCODING, estimate: true, lists: listTokens(records, count), tools: toolTokens(measured) };
}

/** Each server's tools/list: the tokens of each definition, and their total. */
export function listTokens(records: readonly LogRecord[], count: CountTokens): ListTokens[] {
  return [...toolDefinitions(records).values()].map((s): ListTokens => {
    const tools = [...s.tools].map(([name, definition]) => ({ name, tokens: count(JSON.stringify(definition)) }));
    return { server: s.key, addresses: s.addresses, tools, total: sum(tools.map((t) => t.tokens)), unreadableListings: s.unreadableListings };
  });
}

/** One tools/call's argument and result tokens (null: not held whole in the log); null for other calls. */
export interface CallTokens {
  tool: string;
  arguments: number | null;
  result: number | null;
}

export function callTokens(call: Call, count: CountTokens): CallTokens | null {
  if (call.method !== "tools/call" || call.tool === null) return null;
  const args = obj(call.request?.params)?.arguments;
  const answer = call.records.findLast((r) => r.kind === "response");
  return { tool: call.tool, arguments: whole(args) ? count(JSON.stringify(args)) : null, result: answer && whole(answer.result) ? count(JSON.stringify(answer.result)) : null };
}

/** Per tool: calls, mean and max argument tokens, mean, p95 and max result tokens; costliest results first. */
export function toolTokens(calls: Iterable<CallTokens>): ToolTokens[] {
  const byTool = new Map<string, { calls: number; args: number[]; results: number[] }>();
  for (const call of calls) {
    const entry = byTool.get(call.tool) ?? { calls: 0, args: [], results: [] };
    byTool.set(call.tool, entry);
    entry.calls++;
    if (call.arguments !== null) entry.args.push(call.arguments);
    if (call.result !== null) entry.results.push(call.result);
  }
  const mean = (v: number[]): number | null => (v.length === 0 ? null : Math.round(sum(v) / v.length));
  // Not Math.max(...v): a spread of a few hundred thousand values overflows the stack.
  const max = (v: number[]): number | null => (v.length === 0 ? null : v.reduce((a, b) => Math.max(a, b)));
  const tools = [...byTool].map(([tool, e]): ToolTokens => ({
    tool,
    calls: e.calls,
    counted: { arguments: e.args.length, results: e.results.length },
    arguments: { mean: mean(e.args), max: max(e.args) },
    results: { mean: mean(e.results), p95: percentile(e.results, 95), max: max(e.results) },
  }));
  tools.sort((a, b) => (b.results.mean ?? 0) - (a.results.mean ?? 0) || a.tool.localeCompare(b.tool));
  return tools;
}

/** The report as text for a terminal, after the stats table (names a peer chose made printable). */
export function tokenText(report: TokenReport): string {
  const name = (text: string): string => printable(clip(text, 60));
  const out = [`Tokens (estimated with ${report.encoding}; other models count differently)`];
  for (const list of report.lists) {
    out.push(`  tools/list of ${name(list.server)}: ${list.total} tokens for ${list.tools.length} tool definition${list.tools.length === 1 ? "" : "s"}${list.unreadableListings > 0 ? ` (${list.unreadableListings} listing${list.unreadableListings === 1 ? "" : "s"} not in the log whole: not counted)` : ""}`);
    for (const t of [...list.tools].sort((a, b) => b.tokens - a.tokens)) out.push(`    ${name(t.name)}  ${t.tokens}`);
  }
  if (report.lists.length === 0) out.push("  no tools/list in the log");
  for (const t of report.tools) {
    const r = t.results;
    out.push(`  tools/call ${name(t.tool)}: ${t.calls} call${t.calls === 1 ? "" : "s"}; result tokens mean ${r.mean ?? "-"}, p95 ${r.p95 ?? "-"}, max ${r.max ?? "-"}; argument tokens mean ${t.arguments.mean ?? "-"}${t.counted.results < t.calls ? ` (${t.calls - t.counted.results} without a whole result in the log)` : ""}`);
  }
  return `${out.join("\n")}\n`;
}
