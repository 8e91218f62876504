/**
 * What enforce mode puts on the wire for a judged message: the JSON-RPC errors it answers with, the tools/list
 * it trims, the SSE events it sends or drops. Pure functions of a message and its decision; the policy that
 * made the decision is not needed here.
 */
import { INTERCEPT_DROPPED_CODE, JUDGEMENT_FAILED_CODE, JUDGEMENT_FAILED_MESSAGE, POLICY_DENIED_CODE, POLICY_DENIED_MESSAGE, UNREADABLE_CODE, UNREADABLE_MESSAGE, type RequestId } from "./jsonrpc.js";
import type { Decision } from "./decision.js";
import type { Judged, RpcEvent } from "./rpc-event.js";

/** The rule a message that cannot be read unambiguously is recorded under (deny in enforce mode, flag in monitor). */
export const UNREADABLE_RULE = "unreadable";
/**
 * The rule an answer to no request is recorded under on stdio (deny in enforce mode: dropped; flag in monitor):
 * the proxy sees a launch from its first byte, so such an answer is a duplicate, or the result of a call some
 * reader read and the proxy did not (how a smuggled call's result came back).
 */
export const UNMATCHED_ANSWER_RULE = "unmatched-answer";
/** The rule a message whose judgement failed is recorded under: enforce mode denies it (fails closed), monitor mode flags it. */
export const JUDGEMENT_FAILED_RULE = "judgement-failed";

/** What enforce mode sends for a message it refuses as unreadable (-32052, distinct from a policy denial). */
export function unreadableError(id: RequestId | null, reason: string): Record<string, unknown> {
  return { jsonrpc: "2.0", id, error: { code: UNREADABLE_CODE, message: `${UNREADABLE_MESSAGE}: ${reason}`, data: { reason } } };
}

/** What the sender of an intercepted request gets when it was dropped at the proxy (`reason` says by what). */
export function droppedError(id: RequestId | null, reason: string): Record<string, unknown> {
  return { jsonrpc: "2.0", id, error: { code: INTERCEPT_DROPPED_CODE, message: `mcp-wiretap: ${reason}`, data: { reason } } };
}

/**
 * What enforce mode puts on the wire instead of a denied message. The JSON-RPC error code is
 * POLICY_DENIED_CODE (-32051, in the server-error range, used by no MCP revision); the message names the
 * rules, and `data.rules` lists them with their reasons.
 */
export function policyError(id: RequestId | null, decision: Decision): Record<string, unknown> {
  const failed = decision.rules.find((r) => r.name === JUDGEMENT_FAILED_RULE && r.action === "deny");
  if (failed) return { jsonrpc: "2.0", id, error: { code: JUDGEMENT_FAILED_CODE, message: failed.reason ?? JUDGEMENT_FAILED_MESSAGE, data: { reason: failed.reason ?? "" } } };
  const unreadable = decision.rules.find((r) => r.name === UNREADABLE_RULE && r.action === "deny");
  if (unreadable) return unreadableError(id, unreadable.reason ?? "");
  const denying = decision.rules.filter((r) => r.action === "deny");
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: POLICY_DENIED_CODE,
      message: `${POLICY_DENIED_MESSAGE}: ${denying.map((r) => r.name).join(", ")}`,
      data: { rules: denying.map((r) => ({ name: r.name, ...(r.reason ? { reason: r.reason } : {}) })) },
    },
  };
}

/** An answer denied for answering no request: dropped, since no one waits for an error in its place. */
export function answersNothing(decision: Decision): boolean {
  return decision.rules.some((r) => r.name === UNMATCHED_ANSWER_RULE && r.action === "deny");
}

export function isEnforcedDeny(j: Judged): boolean {
  return j.decision.enforced;
}

/**
 * A tools/list result with the tools a detector denied taken out, when every denial points at single
 * tools; null when the whole result has to go.
 */
export function withoutDeniedTools(e: RpcEvent, decision: Decision): { message: Record<string, unknown>; removed: string[] } | null {
  if (e.method !== "tools/list" || e.kind !== "response") return null;
  const raw = e.raw as { result?: { tools?: unknown[] } } | undefined;
  const tools = raw?.result?.tools;
  if (!Array.isArray(tools)) return null;
  const indices = new Set<number>();
  for (const rule of decision.rules) {
    if (rule.action !== "deny") continue;
    if (!rule.name.startsWith("detector:") || !rule.findings?.length) return null;
    for (const f of rule.findings) {
      const m = /^\/result\/tools\/(\d+)(?:\/|$)/.exec(f.path);
      if (!m) return null;
      indices.add(Number(m[1]));
    }
  }
  const removed = [...indices].map((i) => String((tools[i] as { name?: unknown } | undefined)?.name ?? i));
  const kept = tools.filter((_, i) => !indices.has(i));
  return { message: { ...(raw as object), result: { ...raw!.result, tools: kept } }, removed };
}

/** The message to send in place of a denied server→client one; null: drop it. */
export function replacementForServerMessage({ event: e, decision }: Judged, removeDeniedTools: boolean): Record<string, unknown> | null {
  if (answersNothing(decision)) return null;
  if (e.kind === "response" && removeDeniedTools) {
    const trimmed = withoutDeniedTools(e, decision);
    if (trimmed) return trimmed.message;
  }
  if (e.kind === "response" || e.kind === "error") return policyError(e.id ?? null, decision);
  return null;
}

/**
 * An SSE event carrying one message (keeping the original event id so resumption still works). Only an id of
 * printable ASCII is kept: one holding a character that some reader takes for a line break (U+2028, VT, NEL,
 * or a byte that does under the stream's charset label) could carry a whole event of its own into the
 * replacement.
 */
export function sseEvent(message: unknown, id?: string): Buffer {
  const kept = id !== undefined && /^[\x20-\x7e]+$/.test(id) ? id : undefined;
  return Buffer.from(`event: message\n${kept ? `id: ${kept}\n` : ""}data: ${asciiJson(message)}\n\n`);
}

/**
 * JSON with every character past ASCII written as a `\uXXXX` escape (the same value to every JSON reader):
 * U+2028, U+2029 and NEL in a server-chosen text (an id, a kept tool's description) would otherwise break the
 * line for a reader that splits as httpx does, and under a single-byte label a byte of a UTF-8 sequence may too.
 */
export function asciiJson(message: unknown): string {
  return JSON.stringify(message).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export const DROPPED_EVENT = Buffer.from(": mcp-wiretap policy blocked a message\n\n");
