import { errorText, header, num, obj, ruleNames, str, type LogRecord } from "../saved-logs/filters.js";
import { globToRegExp } from "../util/glob.js";
import type { Call } from "./calls.js";
import { isToolError } from "./calls.js";
import { atLeast, deprecationOf, STATELESS_REVISION } from "./deprecations.js";
import type { Condition } from "./names.js";
import type { LoadedLogs } from "./read-logs.js";

export { CONDITIONS, DEFAULT_FAIL_ON, type Condition } from "./names.js";

/** Conditions that options add: `--expect-tool`, `--forbid-tool`, `--max-latency`. */
export type OptionCondition = "expect-tool" | "forbid-tool" | "latency";

/** One reason to fail, tied to the record it is about (or to the log, for `incomplete`, `expect-tool`). */
export interface Finding {
  condition: Condition | OptionCondition;
  time: string | null;
  server: string | null;
  session: string | null;
  /** The exchange of the record (joins a request sent before its session had a name to that session). */
  flow: string | null;
  id: unknown;
  method: string | null;
  tool: string | null;
  reason: string;
}

export interface CheckOptions {
  failOn: readonly Condition[];
  expectTools?: readonly string[];
  forbidTools?: readonly string[];
  maxLatencyMs?: number;
}

/** Every finding of the chosen conditions, in log order within each condition. */
export function findConditions(logs: LoadedLogs, calls: readonly Call[], o: CheckOptions): Finding[] {
  const on = new Set(o.failOn);
  const out: Finding[] = [];
  const rpc = logs.records.filter((r) => r.event === "rpc");
  if (on.has("error")) {
    for (const r of rpc) {
      if (r.kind === "error") out.push(finding("error", r, `JSON-RPC error ${errorText(obj(r.error) ?? {}) || "(payload not recorded)"}`));
      else if (r.kind === "response" && isToolError(r)) out.push(finding("error", r, "tool result has isError: true"));
    }
  }
  if (on.has("invalid")) for (const r of rpc) if (r.kind === "invalid") out.push(finding("invalid", r, str(r.reason) ?? "invalid message"));
  for (const action of ["deny", "flag"] as const) {
    if (!on.has(action)) continue;
    for (const r of logs.records) {
      const decision = obj(r.decision);
      if (str(decision?.action) === action) out.push(finding(action, r, decisionText(decision!)));
    }
  }
  if (on.has("flag")) for (const r of rpc) if (typeof r.roundProblem === "string") out.push(finding("flag", r, r.roundProblem));
  if (on.has("pending")) {
    for (const call of calls) {
      if (call.outcome !== "unanswered" && call.outcome !== "open") continue;
      const last = call.records.at(-1)!;
      const reason = last.kind === "unanswered" ? `unanswered: ${str(last.reason) ?? "no reason given"}` : str(last.resultType) === "input_required" ? "input required, never retried before the log ends" : "no answer before the log ends";
      out.push({ ...finding("pending", last, reason), id: call.id, method: call.method, tool: call.tool });
    }
  }
  if (on.has("mismatch")) out.push(...mismatches(logs.records));
  if (on.has("drift") || on.has("app-changed")) {
    for (const r of rpc) {
      for (const rule of arrayOf(obj(r.decision)?.rules)) {
        for (const f of arrayOf(rule.findings)) {
          if ((f.type === "tool_changed" || f.type === "tool_added") && on.has("drift")) out.push(finding("drift", r, `${str(f.type)}: ${str(f.detail) ?? str(f.path) ?? ""}`));
          if (f.type === "ui_changed" && on.has("app-changed")) out.push(finding("app-changed", r, `ui_changed: ${str(f.detail) ?? str(f.path) ?? ""}`));
        }
      }
    }
  }
  if (on.has("deprecated")) {
    for (const r of rpc) {
      const why = deprecationOf(r);
      if (why !== null) out.push(finding("deprecated", r, why));
    }
  }
  if (on.has("incomplete")) out.push(...incompleteness(logs));
  out.push(...optionFindings(rpc, o));
  return out;
}

function optionFindings(rpc: readonly LogRecord[], o: CheckOptions): Finding[] {
  const out: Finding[] = [];
  const toolCalls = rpc.filter((r) => r.kind === "request" && r.method === "tools/call" && typeof r.tool === "string");
  for (const name of o.expectTools ?? []) {
    const re = globToRegExp(name);
    if (!toolCalls.some((r) => re.test(r.tool as string))) out.push({ ...blank("expect-tool"), tool: name, reason: `no call of tool ${name} in the log` });
  }
  const forbidden = (o.forbidTools ?? []).map((name) => ({ name, re: globToRegExp(name) }));
  for (const r of toolCalls) {
    const hit = forbidden.find((f) => f.re.test(r.tool as string));
    if (hit) out.push(finding("forbid-tool", r, `tool ${str(r.tool)} is forbidden (--forbid-tool ${hit.name})`));
  }
  if (o.maxLatencyMs !== undefined) {
    for (const r of rpc) {
      const ms = num(r.latencyMs);
      if ((r.kind === "response" || r.kind === "error") && ms !== null && ms > o.maxLatencyMs) out.push(finding("latency", r, `took ${ms} ms (over --max-latency ${o.maxLatencyMs})`));
      // A call made as a task: its latency runs to the task's end.
      const task = num(obj(obj(r.task)?.end)?.callLatencyMs);
      if (task !== null && task > o.maxLatencyMs) out.push(finding("latency", r, `the task took ${task} ms to end (over --max-latency ${o.maxLatencyMs})`));
    }
  }
  return out;
}

const NAMED = new Set(["tools/call", "prompts/get", "resources/read"]);

/**
 * Routing headers that disagree with the body (`headerMismatch` on the record), and — since a request
 * without `Mcp-Method` gets no `headerMismatch` at all — stateless requests whose exchange lacked a
 * header the revision requires (read from the exchange's `http` record).
 */
function mismatches(records: readonly LogRecord[]): Finding[] {
  const out: Finding[] = [];
  const httpByFlow = new Map<string, LogRecord>();
  for (const r of records) if (r.event === "http" && typeof r.flow === "string") httpByFlow.set(r.flow, r);
  for (const r of records) {
    if (r.event !== "rpc") continue;
    const named = new Set<string>();
    for (const m of arrayOf(r.headerMismatch)) {
      named.add(String(m.header).toLowerCase());
      out.push(finding("mismatch", r, `${str(m.header)} header ${JSON.stringify(m.headerValue ?? null)} but body ${JSON.stringify(m.bodyValue ?? null)}`));
    }
    const version = str(r.protocolVersion);
    if (r.kind !== "request" || r.direction !== "client_to_server" || !atLeast(version, STATELESS_REVISION) || r.transport !== "streamable-http") continue;
    const http = httpByFlow.get(str(r.flow) ?? "");
    if (!http) continue;
    const required = ["MCP-Protocol-Version", "Mcp-Method", ...(NAMED.has(str(r.method) ?? "") ? ["Mcp-Name"] : [])];
    const missing = required.filter((h) => !named.has(h.toLowerCase()) && header(http.requestHeaders, h.toLowerCase()) === undefined);
    if (missing.length > 0) out.push(finding("mismatch", r, `required header${missing.length > 1 ? "s" : ""} missing under ${version}: ${missing.join(", ")}`));
  }
  return out;
}

/** Signs that records are missing: unreadable lines, audit-chain gaps, dropped records, no `stop` at the end. */
function incompleteness(logs: LoadedLogs): Finding[] {
  const out: Finding[] = [];
  for (const source of logs.sources) {
    for (const u of source.unreadable) out.push({ ...blank("incomplete"), reason: `${source.name}:${u.line}: not a JSON record (cut short or edited)` });
  }
  for (const p of logs.chain?.problems ?? []) {
    if (p.problem.startsWith("not a JSON record")) continue; // already said above
    out.push({ ...blank("incomplete"), reason: `${p.file}:${p.line}${p.seq !== null ? ` (seq ${p.seq})` : ""}: ${p.problem}` });
  }
  for (const r of logs.records) {
    const dropped = num(r.droppedRecords);
    if (r.event === "stop" && dropped !== null && dropped > 0) out.push(finding("incomplete", r, `the proxy dropped ${dropped} record(s) it could not write`));
  }
  if (logs.records.at(-1)?.event !== "stop") {
    out.push({ ...blank("incomplete"), time: str(logs.records.at(-1)?.time), reason: "the log does not end with a stop record (the proxy was killed, is still running, or the log was cut)" });
  }
  return out;
}

function finding(condition: Finding["condition"], r: LogRecord, reason: string): Finding {
  return {
    condition,
    time: str(r.time),
    server: str(r.server) ?? str(r.target),
    session: str(r.session),
    flow: str(r.flow),
    id: r.id ?? null,
    method: str(r.method),
    tool: str(r.tool),
    reason,
  };
}

function blank(condition: Finding["condition"]): Finding {
  return { condition, time: null, server: null, session: null, flow: null, id: null, method: null, tool: null, reason: "" };
}

function decisionText(decision: LogRecord): string {
  const rules = arrayOf(decision.rules);
  const names = ruleNames(decision);
  const reasons = rules.map((r) => str(r.reason)).filter((x): x is string => x !== null);
  const enforced = decision.enforced === true ? " (enforced)" : "";
  return `${str(decision.action)} by ${names.join(", ") || "default"}${reasons.length > 0 ? `: ${reasons.join("; ")}` : ""}${enforced}`;
}

function arrayOf(v: unknown): LogRecord[] {
  return Array.isArray(v) ? v.map((x) => obj(x)).filter((x): x is LogRecord => x !== undefined) : [];
}
