import type { TableEvictedRecord } from "../bounds/evictions.js";
import { peerShareOf } from "../bounds/shared-table.js";
import { Correlator, opposite, type PendingRequest, type Unanswered } from "./correlator.js";
import {
  cancelledRequestId,
  classifyMessage,
  metaProtocolVersion,
  progressToken,
  progressTokenOfNotification,
  resultType,
  toolName,
  type ClassifiedMessage,
  type RequestId,
} from "./jsonrpc.js";
import { LegacyEndpoints } from "./legacy-endpoints.js";
import { MultiRoundCalls } from "./multi-round.js";
import type { Judged, Judgement, MessageContext, RpcEvent } from "./rpc-event.js";
import { SessionTable, type SessionRecord } from "./sessions.js";
import { senderPeer } from "./table-peer.js";
import { runEach } from "../util/run-each.js";
import { TaskCalls } from "./tasks/task-calls.js";
import { unansweredEvent } from "./unanswered-event.js";
import type { WaitingBudget } from "../budget/waiting-budget.js";

export interface TrackerLimits {
  maxPending: number;
  maxSessions: number;
  /** Bytes each table may hold (default: TABLE_BYTES); the legacy endpoints and open rounds take a quarter. */
  maxTableBytes?: number;
  /** Each peer may hold this part of each table (default: an eighth; 1: no shares, the table's bounds alone). */
  peerShareDivisor?: number;
}

/**
 * Bytes the pending, given-up and session tables may each hold by default (an eighth of it per peer): real
 * traffic reaches their entry bounds long before (a pending request or a session is a few hundred bytes).
 * What a table holds costs up to four times as much resident memory under a flood (V8 lets the heap grow so
 * far over what is live before collecting it): 16 MiB each made one hostile client cost ~48 MiB held.
 */
export const TABLE_BYTES = 8 * 1024 * 1024;
/** Of an `initialize` request, only `clientInfo` and `capabilities` wait for the answer, each at most this large. */
export const MAX_KEPT_INITIALIZE_BYTES = 65_536;

export interface TrackerOutput {
  rpc(event: RpcEvent): void;
  session(record: SessionRecord): void;
  /** A table let entries go (count and bytes, at most one record every 10 s per table). */
  evicted?(record: TableEvictedRecord): void;
}

/**
 * What a transport hands its messages to: the pipeline (src/pipeline), which returns each one's decision, or
 * the promise of it when the message waits for shared state (or comes after one of its stream that does).
 */
export interface MessageHandler {
  readonly tracker: McpTracker;
  readonly enforcing: boolean;
  /** Counts what waits for a judgement, per stream: each exchange's bodies are attached to it (back-pressure). */
  readonly waitingBudget?: WaitingBudget | undefined;
  message(ctx: TrackedContext, raw: unknown, bytes: number): Judgement;
  invalid(ctx: MessageContext | TrackedContext, reason: string, bytes: number): Judgement;
}

/** Context of one message plus what correlation needs to know about its exchange. */
export interface TrackedContext extends MessageContext {
  /** Correlation scope: the session, or the exchange itself when there is none. */
  scope: string;
  /** A session id the response just assigned (initialize answered with `Mcp-Session-Id`). */
  assignedSession?: string | null;
}

/**
 * The MCP message model at work: classifies each message, ties responses, progress and cancellations to
 * their requests, and follows sessions from initialize to their end.
 */
export class McpTracker {
  readonly correlator: Correlator;
  readonly sessions: SessionTable;
  readonly legacy: LegacyEndpoints;
  readonly rounds: MultiRoundCalls;
  readonly tasks: TaskCalls;

  constructor(
    private readonly out: TrackerOutput,
    limits: TrackerLimits,
    private readonly now: () => number = Date.now,
  ) {
    const bytes = limits.maxTableBytes ?? TABLE_BYTES;
    const evicted = (r: TableEvictedRecord): void => out.evicted?.(r);
    const divisor = limits.peerShareDivisor;
    this.correlator = new Correlator({ maxPending: limits.maxPending, maxPendingBytes: bytes, ...(divisor ? { peerShareDivisor: divisor } : {}) }, (lost) => this.reportUnanswered(lost), evicted);
    const sessionBounds = { maxEntries: limits.maxSessions, maxBytes: bytes };
    this.sessions = new SessionTable(sessionBounds, (r) => out.session(r), evicted, peerShareOf(sessionBounds, divisor));
    const legacyBounds = { maxEntries: limits.maxSessions, maxBytes: bytes / 4 };
    this.legacy = new LegacyEndpoints(legacyBounds, evicted, peerShareOf(legacyBounds, divisor));
    const roundBounds = { maxEntries: limits.maxPending, maxBytes: bytes / 4 };
    this.rounds = new MultiRoundCalls(roundBounds, evicted, peerShareOf(roundBounds, divisor));
    const taskBounds = { maxEntries: limits.maxPending, maxBytes: bytes / 4 };
    this.tasks = new TaskCalls(taskBounds, (e) => out.rpc(e), now, divisor ? peerShareOf(taskBounds, divisor) : undefined);
  }

  /** Records one parsed JSON-RPC message. Returns the event written (for the caller's bookkeeping). */
  message(ctx: TrackedContext, raw: unknown, bytes: number): RpcEvent {
    const event = this.read(ctx, raw, bytes);
    this.out.rpc(event);
    return event;
  }

  /** Classifies and correlates one parsed JSON-RPC message without writing it (the pipeline judges and records it). */
  read(ctx: TrackedContext, raw: unknown, bytes: number): RpcEvent {
    const msg = classifyMessage(raw);
    const { scope, assignedSession, ...context } = ctx;
    const event: RpcEvent = { ...context, kind: msg.kind, bytes, raw, message: msg };
    const now = this.now();
    switch (msg.kind) {
      case "request":
        event.id = msg.id;
        event.method = msg.method;
        event.tool = toolName(msg);
        if (msg.idProblem) event.reason = msg.idProblem;
        if (msg.id !== null) {
          event.protocolVersion ??= this.protocolVersionOf(event, msg);
          Object.assign(event, this.rounds.retry({ server: ctx.server, session: ctx.session, method: msg.method, tool: event.tool }, msg.params));
          const task = this.tasks.request(ctx, msg, event);
          this.correlator.add({
            server: ctx.server,
            session: scope,
            direction: ctx.direction,
            id: msg.id,
            method: msg.method,
            tool: event.tool,
            flow: ctx.flow,
            path: ctx.path,
            transport: ctx.transport,
            startedAt: now,
            peer: senderPeer(ctx),
            progressToken: progressToken(msg),
            ...(msg.method === "initialize" ? { keep: keptOfInitialize(msg.params) } : {}),
            protocolVersion: event.protocolVersion,
            ...(event.round !== undefined ? { call: event.call, round: event.round } : {}),
            ...(task ? { task } : {}),
            ...(msg.method === "resources/read" && typeof msg.params?.uri === "string" ? { readUri: msg.params.uri.slice(0, MAX_READ_URI_CHARS) } : {}),
          });
        }
        break;
      case "notification":
        event.method = msg.method;
        this.linkNotification(ctx, msg, event, now);
        this.tasks.notification(ctx, msg, event);
        break;
      case "response":
      case "error": {
        event.id = msg.id;
        const request = msg.id === null ? undefined : this.requestAnswered(ctx, scope, msg.id, event);
        if (!request && msg.id !== null) {
          event.reason = "no pending request with this id (a duplicate, a late answer, or its request came before the proxy started)";
        } else if (request) {
          event.answered = request;
          event.method = request.method;
          event.tool = request.tool;
          event.latencyMs = now - request.startedAt;
          // Stateless requests name their revision in headers or _meta; the response inherits it.
          event.protocolVersion ??= request.protocolVersion ?? null;
          if (request.method === "initialize" && msg.kind === "response") this.startSession(ctx, assignedSession, request, msg.result, event);
          Object.assign(event, this.rounds.answered({ ...request, session: event.session }, msg.kind === "response" ? msg.result : undefined));
          this.tasks.answered(request, ctx, msg, event);
        }
        const type = resultType(msg);
        if (type) event.resultType = type;
        break;
      }
      case "invalid":
        event.reason = msg.reason;
        if (msg.id !== undefined) event.id = msg.id;
        if (msg.method !== undefined) event.method = msg.method;
        break;
    }
    event.protocolVersion ??= this.protocolVersionOf(event, msg);
    if (event.session !== null) this.sessions.touch(ctx.server, event.session, ctx.transport, event.protocolVersion, senderPeer(ctx));
    return event;
  }

  /**
   * The request a response answers, as its receiver ties them: by the exact id; else, for an id written as a
   * string, by `Number(id)` as the TypeScript SDK does (`"7"`, `" 7"`, `"0x7"` answer request 7: a reading a
   * strict peer does not share, so the message is unreadable too); else a request already given up (its POST
   * ended without the answer, which then came on the session's GET stream).
   */
  private requestAnswered(ctx: TrackedContext, scope: string, id: RequestId, event: RpcEvent): PendingRequest | undefined {
    const direction = opposite(ctx.direction);
    const lenient = typeof id === "string" && id !== "" && Number.isSafeInteger(Number(id)) ? Number(id) : undefined;
    for (const late of [false, true]) {
      const find = (key: RequestId): PendingRequest | undefined =>
        late ? this.correlator.answerLate(ctx.server, scope, direction, key) : this.correlator.answer(ctx.server, scope, direction, key);
      const exact = find(id);
      if (exact) {
        if (late) event.reason = "answers a request already reported unanswered (sent after its stream ended, or on another stream)";
        return exact;
      }
      if (lenient === undefined) continue;
      const numeric = find(lenient);
      if (numeric) {
        const reason = `response id ${JSON.stringify(id).slice(0, 40)} is a string: a peer that reads ids as numbers (the TypeScript SDK) takes it for the answer to request ${lenient}`;
        event.readability = event.readability ? { ...event.readability, reason: `${event.readability.reason}; ${reason}` } : { reason, alternates: [] };
        if (late) event.reason = "answers a request already reported unanswered";
        return numeric;
      }
    }
    return undefined;
  }

  /** An exchange carried something that should have been JSON-RPC and was not. Returns the event written. */
  invalid(ctx: MessageContext | TrackedContext, reason: string, bytes: number): RpcEvent {
    const event = invalidEvent(ctx, reason, bytes);
    this.out.rpc(event);
    return event;
  }

  /** Requests that can no longer be answered: reported, then forgotten. */
  /** Every request given up on is reported, even when reporting one before it fails. */
  giveUp(match: (p: PendingRequest) => boolean, reason: string): void {
    runEach(this.correlator.drain(match).map((p) => () => this.reportUnanswered({ ...p, reason })));
  }

  endSession(server: string, session: string, reason: string, flow?: string): void {
    runEach([
      () => this.giveUp((p) => p.server === server && p.session === session, `session ended (${reason})`),
      () => this.tasks.endSession(server, session, reason),
      () => this.sessions.end(server, session, reason, flow),
    ]);
  }

  /** A legacy GET stream ended: every endpoint it announced goes, and the sessions they named end. */
  endLegacyStream(streamFlow: string, reason: string): void {
    for (const s of this.legacy.removeStream(streamFlow)) this.endSession(s.server, s.endpointPath, reason, streamFlow);
  }

  /** At shutdown: everything still open is reported. */
  close(): void {
    runEach([() => this.giveUp(() => true, "proxy stopped"), () => this.tasks.close(), ...this.sessions.all().map((s) => () => this.sessions.end(s.server, s.session, "proxy stopped"))]);
    this.correlator.flushEvictions();
    this.sessions.flushEvictions();
    this.legacy.flushEvictions();
    this.rounds.flushEvictions();
  }

  private linkNotification(ctx: TrackedContext, msg: ClassifiedMessage, event: RpcEvent, now: number): void {
    let request: PendingRequest | undefined;
    if (event.method === "notifications/progress") {
      const token = progressTokenOfNotification(msg);
      if (token !== undefined) request = this.correlator.byProgressToken(ctx.server, ctx.scope, opposite(ctx.direction), token);
    } else if (event.method === "notifications/cancelled") {
      const id = cancelledRequestId(msg);
      // A cancellation travels the same way as the request it cancels.
      if (id !== undefined) request = this.correlator.cancel(ctx.server, ctx.scope, ctx.direction, id);
    } else if (ctx.direction === "server_to_client") {
      // Stateless revision: what a server announces on a `subscriptions/listen` stream answers that listen.
      request = this.correlator.listenOf(ctx.server, ctx.scope, "client_to_server");
    }
    if (request) {
      event.related = { id: request.id, method: request.method, elapsedMs: now - request.startedAt };
      if (request.tool !== undefined) event.related.tool = request.tool;
    }
  }

  private startSession(
    ctx: TrackedContext,
    assignedSession: string | null | undefined,
    request: PendingRequest,
    result: Record<string, unknown>,
    event: RpcEvent,
  ): void {
    const session = assignedSession ?? ctx.session;
    const version = typeof result.protocolVersion === "string" ? result.protocolVersion : null;
    event.protocolVersion = version ?? event.protocolVersion;
    if (session === null) return;
    event.session = session;
    const params = (request.keep?.value ?? {}) as Record<string, unknown>;
    const instructions = result.instructions;
    this.sessions.start(
      { server: ctx.server, session, transport: ctx.transport, protocolVersion: version },
      {
        flow: ctx.flow,
        clientInfo: params.clientInfo,
        serverInfo: result.serverInfo,
        capabilities: { client: params.capabilities, server: result.capabilities },
        instructionsBytes: typeof instructions === "string" ? Buffer.byteLength(instructions) : 0,
      },
      // Charged to whoever chose its name: the server that assigned it, else the client that sent it.
      assignedSession ? senderPeer(ctx) : request.peer,
    );
  }

  private protocolVersionOf(event: RpcEvent, msg: ClassifiedMessage): string | null {
    const fromSession = event.session === null ? undefined : this.sessions.get(event.server, event.session)?.protocolVersion;
    if (fromSession) return fromSession;
    const fromMeta = metaProtocolVersion(msg);
    if (fromMeta) return fromMeta;
    if (event.method === "initialize" && msg.kind === "request") {
      const v = msg.params?.protocolVersion;
      if (typeof v === "string") return v;
    }
    return null;
  }

  private reportUnanswered(p: Unanswered): void {
    const session = p.session?.startsWith("flow:") ? null : p.session;
    const protocolVersion = (session === null ? undefined : this.sessions.get(p.server, session)?.protocolVersion) ?? p.protocolVersion ?? null;
    this.out.rpc(unansweredEvent({ ...p, session, protocolVersion }, p.reason, this.now()));
  }
}

/**
 * What the session record needs of an `initialize` request while it waits for its answer: `clientInfo` and
 * `capabilities`, each replaced by a note when larger than MAX_KEPT_INITIALIZE_BYTES (never the whole params:
 * a client that never gets answers would make the proxy hold every request it sends).
 */
/** A read's URI kept at most this long: past it (over the pin store's 512-byte names) an app is not pinned, and said so. */
const MAX_READ_URI_CHARS = 600;

function keptOfInitialize(params: Record<string, unknown> | undefined): { value: unknown; bytes: number } {
  let bytes = 0;
  const value: Record<string, unknown> = {};
  for (const name of ["clientInfo", "capabilities"] as const) {
    const member = params?.[name];
    if (member === undefined) continue;
    const size = Buffer.byteLength(JSON.stringify(member) ?? "");
    const kept = size <= MAX_KEPT_INITIALIZE_BYTES;
    value[name] = kept ? member : { omitted: true, bytes: size, reason: `larger than ${MAX_KEPT_INITIALIZE_BYTES} bytes: not kept while the request waited for its answer` };
    bytes += kept ? size : 200;
  }
  return { value, bytes };
}

/** The event of something that should have been JSON-RPC and was not. */
export function invalidEvent(ctx: MessageContext | TrackedContext, reason: string, bytes: number): RpcEvent {
  const { scope: _scope, assignedSession: _assigned, ...context } = ctx as TrackedContext;
  return { ...context, kind: "invalid", reason, bytes };
}
