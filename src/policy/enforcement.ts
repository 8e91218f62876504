import { classifyMessage, JUDGEMENT_FAILED_MESSAGE, toolName } from "../mcp/jsonrpc.js";
import type { RpcEvent } from "../mcp/rpc-event.js";
import type { Decision, DecisionRule, PolicyFinding } from "../mcp/decision.js";
import { answersNothing, JUDGEMENT_FAILED_RULE, UNMATCHED_ANSWER_RULE, UNREADABLE_RULE, withoutDeniedTools } from "../mcp/replies.js";
import { nameReadings } from "./name-readings.js";
import type { Policy } from "./policy.js";
import { defineMember } from "../log/redact/members.js";

export { JUDGEMENT_FAILED_RULE, UNREADABLE_RULE };

/** The decision for a message the policy could not judge (it threw): never an allow. */
export function failedJudgement(enforcing: boolean, err: unknown): Decision {
  const reason = `${JUDGEMENT_FAILED_MESSAGE}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
  const action = enforcing ? "deny" : "flag";
  return { action, enforced: enforcing, rules: [{ name: JUDGEMENT_FAILED_RULE, action, reason }] };
}

/**
 * Judges a message in every plausible reading (see body/body-reading): the rules of each reading are merged,
 * so one denied reading denies the message. A message with more than one reading also gets the `unreadable`
 * rule: enforce mode refuses it, monitor mode flags it. The other readings are judged at once (against the
 * policy as it stands now); only the message's own reading may wait for shared state.
 */
export function judgeReadings(policy: Pick<Policy, "decide" | "judge" | "enforcing">, e: RpcEvent): Decision | Promise<Decision> {
  const merge = otherReadings(policy, e);
  const decision = policy.decide(e);
  return decision instanceof Promise ? decision.then(merge) : merge(decision);
}

function otherReadings(policy: Pick<Policy, "judge" | "enforcing">, e: RpcEvent): (decision: Decision) => Decision {
  const loose = withLooseNames(policy, e);
  // A message that is not JSON-RPC (an id that is an object, no `jsonrpc`, a body that is not JSON) is not
  // judged by the rules; a lenient receiver may still act on it, so enforce mode refuses it.
  const invalid = e.kind === "invalid" && policy.enforcing;
  // Stateless routing headers that name another method or target than the body: a receiver that dispatches
  // on the header reads another message (a missing header is only recorded: the server refuses it).
  const routed = policy.enforcing ? (e.headerMismatch ?? []).filter((m) => m.headerValue !== null && m.header !== "MCP-Protocol-Version") : [];
  if (!e.readability && !invalid && routed.length === 0) return (decision) => withUnmatchedAnswer(policy, e, loose(decision));
  const alternates = [...(e.readability?.alternates ?? []), ...(routed.length > 0 ? [headerReading(e.raw, routed)] : [])];
  const alternateRules = alternates.map((raw) => policy.judge(alternateReading(e, raw), { observe: false }).rules);
  const reason = [
    e.readability?.reason,
    invalid ? `not a message the proxy can judge: ${e.reason ?? "invalid"}` : undefined,
    ...routed.map((m) => `header ${m.header} ${JSON.stringify(m.headerValue).slice(0, 80)} disagrees with the body (${JSON.stringify(m.bodyValue).slice(0, 80)})`),
  ]
    .filter((r) => r !== undefined)
    .join("; ");
  return (judged) => {
    const decision = withUnmatchedAnswer(policy, e, loose(judged));
    const rules = [...decision.rules];
    for (const rule of alternateRules.flat()) {
      const same = rules.findIndex((r) => r.name === rule.name && r.action === rule.action);
      if (same === -1) rules.push(rule);
      // Findings of another reading still mark where the recorded payload is masked.
      else if (rule.findings) rules[same] = { ...rules[same]!, findings: mergedFindings(rules[same]!.findings ?? [], rule.findings) };
    }
    rules.push({ name: UNREADABLE_RULE, action: policy.enforcing ? "deny" : "flag", reason });
    const action = combined(rules);
    return { action, enforced: action === "deny" && policy.enforcing, rules };
  };
}

/**
 * A server may normalise the names it dispatches on (trim them, drop control and invisible characters, fold
 * case, NFKC): `"Delete_Everything "` can run `delete_everything`. When the method or tool name of a message
 * is not already in that form, the normalised reading is judged too and its rules merged (a denial holds).
 */
function withLooseNames(policy: Pick<Policy, "judge" | "enforcing">, e: RpcEvent): (decision: Decision) => Decision {
  const readings = nameReadings(e.raw);
  if (readings.length === 0) return (decision) => decision;
  const readingRules = readings.map((reading) => policy.judge(alternateReading(e, reading), { observe: false }).rules);
  return (decision) => {
    const rules = [...decision.rules];
    for (const rule of readingRules.flat()) {
      if (rules.some((r) => r.name === rule.name && r.action === rule.action)) continue;
      rules.push({ ...rule, reason: `${rule.reason ?? rule.name}, with the method and tool names normalised as a lenient server may read them` });
    }
    const action = combined(rules);
    return { action, enforced: action === "deny" && policy.enforcing && e.kind !== "invalid", rules };
  };
}

/**
 * On stdio the proxy reads a launch from its first byte: an answer whose id no pending request has is a
 * duplicate, or the answer to a call some receiver read and the proxy did not. Enforce mode drops it (no one
 * waits for it), monitor mode flags it.
 */
function withUnmatchedAnswer(policy: Pick<Policy, "enforcing">, e: RpcEvent, decision: Decision): Decision {
  if (e.transport !== "stdio" || (e.kind !== "response" && e.kind !== "error") || e.id === null || e.id === undefined || e.method !== undefined) return decision;
  const action = policy.enforcing ? "deny" : "flag";
  const rules = [...decision.rules, { name: UNMATCHED_ANSWER_RULE, action, reason: `answers no request pending on this launch (id ${JSON.stringify(e.id).slice(0, 40)})` } as const];
  const combinedAction = combined(rules);
  return { action: combinedAction, enforced: combinedAction === "deny" && policy.enforcing, rules };
}

/** The message as a receiver that dispatches on `Mcp-Method` / `Mcp-Name` reads it. */
function headerReading(raw: unknown, routed: { header: string; headerValue: string | null }[]): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const message = { ...(raw as Record<string, unknown>) };
  const params = typeof message.params === "object" && message.params !== null ? { ...(message.params as Record<string, unknown>) } : {};
  for (const m of routed) {
    if (m.header === "Mcp-Method") message.method = m.headerValue;
    if (m.header === "Mcp-Name") defineMember(params, message.method === "resources/read" ? "uri" : "name", m.headerValue);
  }
  message.params = params;
  return message;
}


/** The event as another reading of its body: a request names its own method and tool, a response keeps its request's. */
function alternateReading(e: RpcEvent, raw: unknown): RpcEvent {
  const message = classifyMessage(raw);
  const other: RpcEvent = { ...e, raw, message, kind: message.kind };
  if (message.kind === "request" || message.kind === "notification") {
    other.method = message.method;
    other.tool = message.kind === "request" ? toolName(message) : undefined;
  }
  return other;
}

function mergedFindings(a: PolicyFinding[], b: PolicyFinding[]): PolicyFinding[] {
  const seen = new Set(a.map((f) => `${f.type} ${f.path}`));
  return [...a, ...b.filter((f) => !seen.has(`${f.type} ${f.path}`))];
}

function combined(rules: DecisionRule[]): Decision["action"] {
  if (rules.some((r) => r.action === "deny")) return "deny";
  if (rules.some((r) => r.action === "flag")) return "flag";
  return "allow";
}

/** Settles an enforced decision before it is recorded: its `effect`. */
export function settleEnforcement(e: RpcEvent, decision: Decision, removeDeniedTools: boolean): void {
  if (decision.enforced) decision.effect = plannedEffect(e, decision, removeDeniedTools);
}

/** What enforce mode does with a denied message: written into its record before it happens. */
export function plannedEffect(e: RpcEvent, decision: Decision, removeDeniedTools: boolean): string {
  if (answersNothing(decision)) return "dropped";
  if (e.direction === "client_to_server") {
    if (e.kind === "request" || e.kind === "invalid") return "not forwarded; the client got a policy error";
    if (e.kind === "notification") return "not forwarded";
    return "replaced by a policy error to the server";
  }
  if (e.kind === "response" && removeDeniedTools) {
    const trimmed = withoutDeniedTools(e, decision);
    if (trimmed) return `removed tools: ${trimmed.removed.join(", ")}`;
  }
  if (e.kind === "response" || e.kind === "error") return "replaced by a policy error";
  return "dropped";
}
