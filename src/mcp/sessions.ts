import { ENTRY_OVERHEAD, textBytes, type EvictionSink, type TableBounds } from "../bounds/evictions.js";
import { SharedTable } from "../bounds/shared-table.js";
import type { Transport } from "./rpc-event.js";

export interface SessionState {
  server: string;
  session: string;
  transport: Transport;
  protocolVersion: string | null;
  startedAt: number;
  messages: number;
}

export interface SessionRecord {
  phase: "start" | "end";
  server: string;
  session: string;
  transport: Transport;
  protocolVersion: string | null;
  flow?: string;
  clientInfo?: unknown;
  serverInfo?: unknown;
  capabilities?: { client: unknown; server: unknown };
  instructionsBytes?: number;
  reason?: string;
  durationMs?: number;
  messages?: number;
}

/**
 * Sessions seen on the wire, bounded by count and bytes (any client can send a long `Mcp-Session-Id`), and
 * each peer to a share: a session is charged to the server that assigned it, or to the peer that first named
 * it mid-way. A session that falls out ends with reason "evicted", in its `session` record.
 */
export class SessionTable {
  private readonly sessions: SharedTable<SessionState>;

  constructor(
    bounds: TableBounds,
    private readonly emit: (record: SessionRecord) => void,
    report: EvictionSink = () => undefined,
    share?: TableBounds,
  ) {
    this.sessions = new SharedTable("sessions", bounds, report, (state) => this.ended(state, "evicted"), share);
  }

  /** Sessions held, and the bytes they take. */
  get usage(): { entries: number; bytes: number } {
    return this.sessions.usage;
  }

  /** What one peer holds. */
  usageOf(peer: string): { entries: number; bytes: number } {
    return this.sessions.usageOf(peer);
  }

  get(server: string, session: string | null): SessionState | undefined {
    return session === null ? undefined : this.sessions.get(key(server, session));
  }

  /** Starts a session (initialize answered), or refreshes a known one; `peer`: the server that assigned it. */
  start(state: Omit<SessionState, "startedAt" | "messages">, record: Omit<SessionRecord, "phase" | "server" | "session" | "transport" | "protocolVersion">, peer: string): void {
    const k = key(state.server, state.session);
    this.sessions.delete(k);
    this.emit({ phase: "start", server: state.server, session: state.session, transport: state.transport, protocolVersion: state.protocolVersion, ...record });
    this.sessions.set(k, { ...state, startedAt: Date.now(), messages: 0 }, peer, sessionBytes(k));
  }

  /** Remembers a session first seen mid-way (the proxy started after its initialize), charged to `peer`, who named it. */
  touch(server: string, session: string, transport: Transport, protocolVersion: string | null, peer: string): SessionState {
    const k = key(server, session);
    let state = this.sessions.get(k);
    if (!state) {
      state = { server, session, transport, protocolVersion, startedAt: Date.now(), messages: 0 };
      // Any client can invent Mcp-Session-Id values: sessions first seen mid-way count against the bounds too.
      this.sessions.set(k, state, peer, sessionBytes(k));
    }
    if (!state.protocolVersion && protocolVersion) state.protocolVersion = protocolVersion;
    state.messages++;
    return state;
  }

  end(server: string, session: string, reason: string, flow?: string): boolean {
    const state = this.sessions.delete(key(server, session));
    if (!state) return false;
    this.ended(state, reason, flow);
    return true;
  }

  /** Writes the evictions still counted (at shutdown). */
  flushEvictions(): void {
    this.sessions.flushEvictions();
  }

  all(): SessionState[] {
    return this.sessions.values();
  }

  private ended(state: SessionState, reason: string, flow?: string): void {
    this.emit({
      phase: "end",
      server: state.server,
      session: state.session,
      transport: state.transport,
      protocolVersion: state.protocolVersion,
      reason,
      durationMs: Date.now() - state.startedAt,
      messages: state.messages,
      ...(flow ? { flow } : {}),
    });
  }
}

/** The key and the state's own copy of the server and session, and the overhead. */
function sessionBytes(k: string): number {
  return 2 * textBytes(k) + ENTRY_OVERHEAD;
}

function key(server: string, session: string): string {
  return `${server}\u0000${session}`;
}
