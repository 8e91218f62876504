import { header, num, obj, ruleNames, str, type LogRecord } from "../../saved-logs/filters.js";
import type { McpEntryInfo, McpMessageSummary } from "./har-format.js";

/** The entry's `_mcp` field: what the log knows about the exchange and each of its messages. */
export function mcpInfo(r: LogRecord, messages: LogRecord[], incomplete: boolean): McpEntryInfo {
  const first = messages[0];
  const session = firstString(messages, "session") ?? header(r.requestHeaders, "mcp-session-id") ?? null;
  const protocolVersion = firstString(messages, "protocolVersion");
  return {
    flow: str(r.flow)!,
    mode: str(r.mode),
    client: str(r.client),
    statusSource: str(r.statusSource),
    tls: r.tls ?? null,
    ...(first && str(first.transport) ? { transport: str(first.transport)! } : {}),
    ...(session ? { session } : {}),
    ...(protocolVersion ? { protocolVersion } : {}),
    ...(r.error !== undefined ? { error: r.error } : {}),
    ...(r.insecureUpstream === true ? { insecureUpstream: true as const } : {}),
    ...(incomplete ? { incomplete: true as const } : {}),
    messages: messages.map(summary),
  };
}

function summary(m: LogRecord): McpMessageSummary {
  const s: McpMessageSummary = { time: str(m.time), direction: str(m.direction), kind: str(m.kind) };
  if (m.id !== undefined && m.id !== null) s.id = m.id;
  if (str(m.method)) s.method = str(m.method)!;
  if (str(m.tool)) s.tool = str(m.tool)!;
  if (num(m.bytes) !== null) s.bytes = num(m.bytes)!;
  if (num(m.latencyMs) !== null) s.latencyMs = num(m.latencyMs)!;
  const d = obj(m.decision);
  if (d && str(d.action) && (d.action !== "allow" || (Array.isArray(d.rules) && d.rules.length > 0))) {
    s.decision = {
      action: str(d.action)!,
      enforced: d.enforced === true,
      rules: ruleNames(d),
      ...(str(d.effect) ? { effect: str(d.effect)! } : {}),
    };
  }
  if (str(m.reason)) s.reason = str(m.reason)!;
  if (str(m.sseEventId)) s.sseEventId = str(m.sseEventId)!;
  if (m.batch !== undefined) s.batch = m.batch;
  if (m.related !== undefined) s.related = m.related;
  if (str(m.argsHash)) s.argsHash = str(m.argsHash)!;
  return s;
}

/** The first message's value of a string field, among those that have one. */
function firstString(messages: LogRecord[], field: string): string | null {
  return messages.map((m) => str(m[field])).find((s) => s !== null) ?? null;
}
