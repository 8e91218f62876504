/** The 2026-07-28 revision's request headers and `_meta` members, for a replayed request. */
import { PROTOCOL_VERSION_META_KEY } from "../mcp/jsonrpc.js";
import { STATELESS_REVISION } from "../mcp/stateless-headers.js";
import type { Message } from "./channel.js";

const NAMED: Record<string, string> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };

export function isStateless(protocolVersion: string | null): boolean {
  return protocolVersion !== null && protocolVersion >= STATELESS_REVISION;
}

/** `Mcp-Method`, `Mcp-Name` and `MCP-Protocol-Version` of a request, as its body says them. */
export function statelessHeaders(message: Message): Record<string, string> {
  const method = typeof message.method === "string" ? message.method : null;
  if (method === null) return {};
  const params = (message.params ?? {}) as Record<string, unknown>;
  const meta = (params._meta ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = { "mcp-method": headerValue(method) };
  const field = NAMED[method];
  if (field && typeof params[field] === "string") out["mcp-name"] = headerValue(params[field]);
  if (typeof meta[PROTOCOL_VERSION_META_KEY] === "string") out["mcp-protocol-version"] = meta[PROTOCOL_VERSION_META_KEY];
  return out;
}

/**
 * Params of a stateless request: the captured `_meta` (the handshake's members travel there), the protocol
 * version set, and the client info the capture carried replaced by the replay's.
 */
export function withStatelessMeta(params: Record<string, unknown>, protocolVersion: string, clientInfo: Message): Record<string, unknown> {
  const meta = { ...((params._meta ?? {}) as Record<string, unknown>) };
  meta[PROTOCOL_VERSION_META_KEY] = protocolVersion;
  for (const key of Object.keys(meta)) if (key === "clientInfo" || key.endsWith("/clientInfo")) meta[key] = clientInfo;
  return { ...params, _meta: meta };
}

/** Values outside printable ASCII travel as `=?base64?…?=` (the revision's sentinel). */
function headerValue(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) && value.trim() === value ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`;
}
