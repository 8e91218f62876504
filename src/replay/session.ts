/**
 * One replay's MCP conversation, the same on every transport: a fresh session (initialize with the captured
 * protocol version and capabilities, the client named as a replay; notifications/initialized), the call,
 * the session ended. Under the stateless revision: the call alone, the handshake's members in `_meta`.
 */
import { ReplayError, type Answer, type Channel, type Message } from "./channel.js";
import { isStateless, withStatelessMeta } from "./stateless.js";

/** The oldest revision a replay offers when the capture did not record the session's handshake. */
export const FALLBACK_PROTOCOL_VERSION = "2025-03-26";

export interface SessionPlan {
  id: string | number;
  method: string;
  params: Record<string, unknown> | undefined;
  protocolVersion: string | null;
  capabilities: unknown;
  clientInfo: Message;
}

export interface SessionResult {
  answer: Answer;
  /** The server's initialize result (absent under the stateless revision). */
  initialized: Message | null;
}

export async function replaySession(channel: Channel, plan: SessionPlan, onVersion: (version: string) => void = () => {}): Promise<SessionResult> {
  try {
    if (isStateless(plan.protocolVersion)) {
      const params = withStatelessMeta(plan.params ?? {}, plan.protocolVersion!, plan.clientInfo);
      onVersion(plan.protocolVersion!);
      return { answer: await channel.request({ jsonrpc: "2.0", id: plan.id, method: plan.method, params }), initialized: null };
    }
    const init = await channel.request({
      jsonrpc: "2.0",
      id: plan.id === 0 ? 1 : 0,
      method: "initialize",
      params: { protocolVersion: plan.protocolVersion ?? FALLBACK_PROTOCOL_VERSION, capabilities: plan.capabilities ?? {}, clientInfo: plan.clientInfo },
    });
    const result = init.message.result as Message | undefined;
    if (!result) throw new ReplayError(`the server refused initialize: ${JSON.stringify(init.message.error ?? init.message)}`);
    if (typeof result.protocolVersion === "string") onVersion(result.protocolVersion);
    await channel.notify({ jsonrpc: "2.0", method: "notifications/initialized" });
    const message: Message = { jsonrpc: "2.0", id: plan.id, method: plan.method };
    if (plan.params !== undefined) message.params = plan.params;
    return { answer: await channel.request(message), initialized: result };
  } finally {
    await channel.close().catch(() => {});
  }
}
