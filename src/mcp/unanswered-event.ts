import type { Direction } from "./correlator.js";
import type { RequestId } from "./jsonrpc.js";
import type { RpcEvent } from "./rpc-event.js";

/** What an `unanswered` record says of the request (or the call made as a task) it gives up on. */
export interface GivenUp {
  flow: string;
  transport: string;
  server: string;
  path: string;
  session: string | null;
  protocolVersion: string | null;
  direction: Direction;
  id: RequestId;
  method: string;
  tool: string | undefined;
  startedAt: number;
}

/** The `unanswered` event of a request given up `now`, for `reason`. */
export function unansweredEvent(p: GivenUp, reason: string, now: number): RpcEvent {
  return {
    flow: p.flow,
    transport: p.transport as RpcEvent["transport"],
    server: p.server,
    path: p.path,
    session: p.session,
    protocolVersion: p.protocolVersion,
    direction: p.direction,
    kind: "unanswered",
    id: p.id,
    method: p.method,
    ...(p.tool !== undefined ? { tool: p.tool } : {}),
    bytes: 0,
    latencyMs: now - p.startedAt,
    reason,
  };
}
