import { POLICY_DENIED_CODE, POLICY_DENIED_MESSAGE, type RequestId } from "../mcp/jsonrpc.js";
import type { RpcEvent } from "../mcp/rpc-event.js";
import type { Decision } from "./policy.js";

/**
 * What enforce mode puts on the wire instead of a denied message. The JSON-RPC error code is
 * POLICY_DENIED_CODE (-32051, in the server-error range, used by no MCP revision); the message names the
 * rules, and `data.rules` lists them with their reasons.
 */
export function policyError(id: RequestId | null, decision: Decision): Record<string, unknown> {
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

export function isEnforcedDeny(e: RpcEvent): boolean {
  return e.decision?.enforced === true;
}

/**
 * A tools/list result with the tools a detector denied taken out, when every denial points at single
 * tools; null when the whole result has to go.
 */
export function withoutDeniedTools(e: RpcEvent): { message: Record<string, unknown>; removed: string[] } | null {
  if (e.method !== "tools/list" || e.kind !== "response" || !e.decision) return null;
  const raw = e.raw as { result?: { tools?: unknown[] } } | undefined;
  const tools = raw?.result?.tools;
  if (!Array.isArray(tools)) return null;
  const indices = new Set<number>();
  for (const rule of e.decision.rules) {
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

/**
 * Settles an enforced decision before it is recorded: its `effect`, or, when the message cannot be
 * replaced on the wire (`notEnforceable`), not enforced after all, and why.
 */
export function settleEnforcement(e: RpcEvent, decision: Decision, removeDeniedTools: boolean): void {
  if (!decision.enforced) return;
  if (e.notEnforceable) {
    decision.enforced = false;
    decision.effect = `not enforced: ${e.notEnforceable}`;
  } else {
    decision.effect = plannedEffect(e, removeDeniedTools);
  }
}

/** What enforce mode does with a denied message: written into its record before it happens. */
export function plannedEffect(e: RpcEvent, removeDeniedTools: boolean): string {
  if (e.direction === "client_to_server") {
    if (e.kind === "request") return "not forwarded; the client got a policy error";
    if (e.kind === "notification") return "not forwarded";
    return "replaced by a policy error to the server";
  }
  if (e.kind === "response" && removeDeniedTools) {
    const trimmed = withoutDeniedTools(e);
    if (trimmed) return `removed tools: ${trimmed.removed.join(", ")}`;
  }
  if (e.kind === "response" || e.kind === "error") return "replaced by a policy error";
  return "dropped";
}

/** The message to send in place of a denied server→client one; null: drop it. */
export function replacementForServerMessage(e: RpcEvent, removeDeniedTools: boolean): Record<string, unknown> | null {
  if (e.kind === "response" && removeDeniedTools) {
    const trimmed = withoutDeniedTools(e);
    if (trimmed) return trimmed.message;
  }
  if (e.kind === "response" || e.kind === "error") return policyError(e.id ?? null, e.decision!);
  return null;
}

/** An SSE event carrying one message (keeping the original event id so resumption still works). */
export function sseEvent(message: unknown, id?: string): Buffer {
  return Buffer.from(`event: message\n${id ? `id: ${id}\n` : ""}data: ${JSON.stringify(message)}\n\n`);
}

export const DROPPED_EVENT = Buffer.from(": mcp-wiretap policy blocked a message\n\n");
