import { ENTRY_OVERHEAD, textBytes, type EvictionSink } from "../bounds/evictions.js";
import { peerShareOf, SharedTable } from "../bounds/shared-table.js";
import { idKey, type RequestId } from "./jsonrpc.js";

export type Direction = "client_to_server" | "server_to_client";

/** The other way (a record's direction read back from a log may be anything: that is no way, null). */
export function opposite(direction: Direction): Direction;
export function opposite(direction: unknown): Direction | null;
export function opposite(direction: unknown): Direction | null {
  return direction === "client_to_server" ? "server_to_client" : direction === "server_to_client" ? "client_to_server" : null;
}

/** What a pending request keeps of a task (tasks/task-calls.ts): it asked for one, or it names one. */
export interface PendingTask {
  asks?: true;
  taskId?: string;
  /** Direction of the request that created the task named. */
  requester?: Direction;
}

/** A request waiting for its response. */
export interface PendingRequest {
  readonly server: string;
  readonly session: string | null;
  /** Direction the request travelled. */
  readonly direction: Direction;
  readonly id: RequestId;
  readonly method: string;
  readonly tool: string | undefined;
  readonly flow: string;
  readonly path: string;
  readonly transport: string;
  readonly startedAt: number;
  /** Whose share of the tables it is charged to: the peer that sent it (src/mcp/table-peer.ts). */
  readonly peer: string;
  readonly progressToken: string | number | undefined;
  /** Protocol revision the request was sent under, when known: its response and unanswered record carry it too. */
  readonly protocolVersion?: string | null;
  /** What a later record needs of the request's params (initialize: clientInfo and capabilities, size-capped). */
  readonly keep?: { value: unknown; bytes: number };
  /** A retry of a multi-round call: the call and the round it opens (its answer carries them too). */
  readonly call?: string;
  readonly round?: number;
  /** The request asked for a task, or names one (src/mcp/tasks). */
  readonly task?: PendingTask;
  /** A resources/read: the URI it named (cut to 600 characters), under which an app in its answer is pinned. */
  readonly readUri?: string;
}

export type Unanswered = PendingRequest & { reason: string };

export interface CorrelatorLimits {
  /** Requests waiting for an answer, and (as many again) requests given up. */
  maxPending: number;
  /** Bytes those requests may hold, each table. */
  maxPendingBytes: number;
  /** Each peer may hold this part of each table (default: an eighth, src/bounds/shared-table.ts). */
  peerShareDivisor?: number;
}

/**
 * Ties responses, progress and cancellations to their requests. The key is
 * (server, session, direction of the request, id): clients and servers number requests independently, and
 * the same id may be reused in another session. The table is bounded by entries and bytes, and each peer
 * (the request's sender) to a share of it; what falls out is handed to `onEvicted`, never dropped silently.
 */
export class Correlator {
  private readonly pending: SharedTable<PendingRequest>;
  private readonly progress = new Map<string, string>();
  /** Open `subscriptions/listen` requests, by scope: the notifications on their streams belong to them. */
  private readonly listens = new Map<string, string>();
  /**
   * Requests given up (their stream ended, the table overflowed), bounded as the table is:
   * a peer still takes an answer that comes later, on another stream of the session, for theirs.
   */
  private readonly givenUp: SharedTable<PendingRequest>;

  constructor(
    limits: CorrelatorLimits,
    private readonly onEvicted: (lost: Unanswered) => void,
    reportEvictions: EvictionSink = () => undefined,
  ) {
    const bounds = { maxEntries: limits.maxPending, maxBytes: limits.maxPendingBytes };
    const share = peerShareOf(bounds, limits.peerShareDivisor);
    this.givenUp = new SharedTable("given_up", bounds, reportEvictions, undefined, share);
    this.pending = new SharedTable(
      "pending",
      bounds,
      reportEvictions,
      (lost, key) => {
        this.unlink(key, lost);
        this.remember(key, lost);
        this.onEvicted({ ...lost, reason: "evicted" });
      },
      share,
    );
  }

  get size(): number {
    return this.pending.size;
  }

  /** What the tables hold: entries and bytes, pending and given up. */
  get usage(): { pending: number; pendingBytes: number; givenUp: number; givenUpBytes: number } {
    return { pending: this.pending.size, pendingBytes: this.pending.usage.bytes, givenUp: this.givenUp.size, givenUpBytes: this.givenUp.usage.bytes };
  }

  /** What one peer holds of the pending table. */
  pendingOf(peer: string): { entries: number; bytes: number } {
    return this.pending.usageOf(peer);
  }

  /** Writes the evictions still counted (at shutdown). */
  flushEvictions(): void {
    this.pending.flushEvictions();
    this.givenUp.flushEvictions();
  }

  add(request: PendingRequest): void {
    const key = keyOf(request);
    const previous = this.pending.get(key);
    // Not remembered: a peer that reuses an id ties the next answer to its latest request, as the table does.
    if (previous) this.onEvicted({ ...previous, reason: "id_reused" });
    this.take(key);
    this.forget(key);
    if (request.progressToken !== undefined) {
      this.progress.set(tokenKey(request.server, request.session, request.direction, request.progressToken), key);
    }
    if (request.method === LISTEN) this.listens.set(scopeKey(request.server, request.session, request.direction), key);
    // Last: holding it may evict older requests of its peer (or of all), each reported.
    this.pending.set(key, request, request.peer, pendingBytes(request));
  }

  /** The request a response answers; removed from the table. */
  answer(server: string, session: string | null, requestDirection: Direction, id: RequestId): PendingRequest | undefined {
    return this.take(requestKey(server, session, requestDirection, id));
  }

  /** A request given up earlier that this late response answers (removed: it is answered now). */
  answerLate(server: string, session: string | null, requestDirection: Direction, id: RequestId): PendingRequest | undefined {
    const key = requestKey(server, session, requestDirection, id);
    return this.forget(key);
  }

  /** The request a `notifications/progress` belongs to (it stays pending). */
  byProgressToken(server: string, session: string | null, requestDirection: Direction, token: string | number): PendingRequest | undefined {
    const key = this.progress.get(tokenKey(server, session, requestDirection, token));
    return key === undefined ? undefined : this.pending.get(key);
  }

  /** The open `subscriptions/listen` request of this scope (it stays pending until its stream ends). */
  listenOf(server: string, session: string | null, requestDirection: Direction): PendingRequest | undefined {
    const key = this.listens.get(scopeKey(server, session, requestDirection));
    return key === undefined ? undefined : this.pending.get(key);
  }

  /** A cancelled request will not be answered: removed from the table. */
  cancel(server: string, session: string | null, requestDirection: Direction, id: RequestId): PendingRequest | undefined {
    return this.take(requestKey(server, session, requestDirection, id));
  }

  /** Removes and returns the requests that match. */
  drain(match: (p: PendingRequest) => boolean): PendingRequest[] {
    const out: PendingRequest[] = [];
    for (const [key, p] of this.pending.keyed()) {
      if (match(p)) {
        out.push(p);
        this.take(key);
        this.remember(key, p);
      }
    }
    return out;
  }

  /** A given-up request keeps only what ties a late answer to it: never the params kept for its answer. */
  private remember(key: string, p: PendingRequest): void {
    this.forget(key);
    const { keep: _keep, ...kept } = p;
    this.givenUp.set(key, kept, kept.peer, pendingBytes(kept));
  }

  private forget(key: string): PendingRequest | undefined {
    return this.givenUp.delete(key);
  }

  private take(key: string): PendingRequest | undefined {
    const p = this.pending.delete(key);
    if (p) this.unlink(key, p);
    return p;
  }

  /** Its progress token and open listen no longer lead to it. */
  private unlink(key: string, p: PendingRequest): void {
    if (p.progressToken !== undefined) this.progress.delete(tokenKey(p.server, p.session, p.direction, p.progressToken));
    if (p.method === LISTEN) {
      const scope = scopeKey(p.server, p.session, p.direction);
      if (this.listens.get(scope) === key) this.listens.delete(scope);
    }
  }
}

function keyOf(p: PendingRequest): string {
  return requestKey(p.server, p.session, p.direction, p.id);
}

const LISTEN = "subscriptions/listen";

function scopeKey(server: string, session: string | null, direction: Direction): string {
  return JSON.stringify([server, session, direction]);
}

/**
 * What tells one request from every other: (server, scope, direction of the request, id). The scope is the
 * session, or the exchange when there is none. The OpenTelemetry spans pair records by it too.
 */
export function requestKey(server: string, scope: string | null, direction: Direction | null, id: RequestId): string {
  return JSON.stringify([server, scope, direction, idKey(id)]);
}

function tokenKey(server: string, session: string | null, direction: Direction, token: string | number): string {
  return JSON.stringify([server, session, direction, typeof token === "number" ? `n:${token}` : `s:${token}`]);
}

/** What one entry holds: its strings (twice: the entry and its key), what it keeps for its answer, its overhead. */
function pendingBytes(p: PendingRequest): number {
  const id = typeof p.id === "string" ? p.id : "";
  return 2 * textBytes(p.server, p.session, p.flow, p.path, p.method, p.tool, id, p.call) + textBytes(p.task?.taskId, p.readUri) + (p.keep?.bytes ?? 0) + ENTRY_OVERHEAD;
}
