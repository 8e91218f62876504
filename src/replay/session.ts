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
  /** `--input`: the `inputResponses` of a second round, when the first asks for input (`input_required`). */
  input?: Record<string, unknown>;
}

export interface SessionResult {
  answer: Answer;
  /** The server's initialize result (absent under the stateless revision). */
  initialized: Message | null;
  /** The first round's answer when it asked for input and `--input` answered it. */
  firstRound?: Answer;
}

export async function replaySession(channel: Channel, plan: SessionPlan, onVersion: (version: string) => void = () => {}): Promise<SessionResult> {
  try {
    if (isStateless(plan.protocolVersion)) {
      const params = withStatelessMeta(plan.params ?? {}, plan.protocolVersion!, plan.clientInfo);
      onVersion(plan.protocolVersion!);
      return withInput(channel, plan, params, await channel.request({ jsonrpc: "2.0", id: plan.id, method: plan.method, params }), null);
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
    return withInput(channel, plan, plan.params, await channel.request(message), result);
  } finally {
    await channel.close().catch(() => {});
  }
}

/**
 * A multi-round call (2026-07-28): a first answer of `resultType: "input_required"` is answered once, with
 * `--input` as `inputResponses` and the server's `requestState` echoed unchanged, under a new id.
 */
async function withInput(channel: Channel, plan: SessionPlan, params: Record<string, unknown> | undefined, first: Answer, initialized: Message | null): Promise<SessionResult> {
  const result = first.message.result as Message | undefined;
  if (plan.input === undefined || result?.resultType !== "input_required") return { answer: first, initialized };
  const { inputResponses: _old, requestState: _stale, ...rest } = params ?? {};
  const retry: Record<string, unknown> = { ...rest, inputResponses: plan.input };
  if (result.requestState !== undefined) retry.requestState = result.requestState;
  const id = typeof plan.id === "number" ? plan.id + 1 : `${plan.id}-2`;
  return { answer: await channel.request({ jsonrpc: "2.0", id, method: plan.method, params: retry }), initialized, firstRound: first };
}
