import type { ClassifiedMessage, RequestId } from "./jsonrpc.js";
import type { Direction, PendingRequest } from "./correlator.js";
import type { Decision } from "./decision.js";

export type Transport = "streamable-http" | "http+sse" | "stdio";

export type RpcKind = "request" | "notification" | "response" | "error" | "invalid" | "unanswered";

/** Where a message was seen: the exchange, the server and the session it belongs to. */
export interface MessageContext {
  flow: string;
  transport: Transport;
  server: string;
  /** The client's `address:port` (`[v6]:port`), for messages of an HTTP exchange. */
  client?: string;
  path: string;
  session: string | null;
  protocolVersion: string | null;
  direction: Direction;
  /** SSE event id when the message came in an event stream. */
  sseEventId?: string;
  batch?: { index: number; size: number };
  /** The upstream's certificate was not verified for this exchange. */
  insecureUpstream?: boolean;
  /** The proxy itself sent this message (its answer to a server's request `--intercept` dropped). */
  proxyAnswer?: true;
  /** Stateless revision: request headers that disagree with the body. */
  headerMismatch?: HeaderMismatch[];
  /** What was wrong with how the message was written (read leniently, as its receiver would). */
  reason?: string;
  /** Its receiver may read the message otherwise than the lenient reading recorded: why, and the other readings. */
  readability?: Readability;
}

export interface Readability {
  reason: string;
  /** Other plausible readings of the message (parsed JSON-RPC messages), judged as well. */
  alternates: unknown[];
}

export interface HeaderMismatch {
  header: string;
  headerValue: string | null;
  bodyValue: string | null;
}

/** One JSON-RPC message, decoded and correlated: what an `event: "rpc"` record is made from. */
export interface RpcEvent extends MessageContext {
  kind: RpcKind;
  id?: RequestId | null;
  method?: string;
  tool?: string;
  bytes: number;
  latencyMs?: number;
  /** The message as it was on the wire (parsed JSON); absent for `unanswered`. */
  raw?: unknown;
  message?: ClassifiedMessage;
  /** For progress and cancellation notifications: the request they refer to. */
  related?: { id: RequestId; method: string; tool?: string; elapsedMs: number };
  /** Why the message is invalid, or why a request was never answered. */
  reason?: string;
  resultType?: string;
  /** Multi-round requests (see multi-round.ts): the call all rounds share, this message's round, and a bad retry. */
  call?: string;
  round?: number;
  roundProblem?: string;
  /** A message of a task (src/mcp/tasks): the task it names and what it says of it. */
  task?: TaskMark;
  /** The answer carries the final result of a call made as a task: the method of that call (its rules judge it). */
  callMethod?: string;
  /** Of an answer: the pending request it took from the correlator (an intercepted answer that is edited puts it back, to be answered by the edit). */
  answered?: PendingRequest;
  /** Set by the pipeline for the record; enforcement reads the decision the pipeline returns (`Judged`). */
  decision?: Decision;
}

/** A message and the decision the pipeline returned for it: what enforcement acts on. */
export interface Judged {
  event: RpcEvent;
  decision: Decision;
}

/** What a record says of the task a message belongs to (the `task` member of an rpc record). */
export interface TaskMark {
  id: string;
  /** The status this message reports. */
  status?: string;
  /** This answer created the task. */
  created?: true;
  /** The task reached its terminal state with this message: the status and the call's latency to it. */
  end?: { status: string; callLatencyMs: number };
  /** This answer (to tasks/result) carries the call's final result. */
  final?: true;
  /** Something is wrong: an unknown task, one of another session, a reused id, a ttl outlived. */
  problem?: string;
}

/**
 * What the pipeline returns for a message: its judgement, or the promise of it when the message waits for
 * shared state (or comes after one of its stream that does). Settled once its record is written.
 */
export type Judgement = Judged | Promise<Judged>;

/** Every judgement of a body or event, in order: at once when none waits. */
export function allJudged(judgements: readonly Judgement[]): Judged[] | Promise<Judged[]> {
  return judgements.some((j) => j instanceof Promise) ? Promise.all(judgements) : (judgements as Judged[]);
}
