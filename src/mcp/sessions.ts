import { ENTRY_OVERHEAD, textBytes, type TableBounds } from "../bounds/evictions.js";
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
 * Sessions seen on the wire, bounded by count and bytes (any client can send a long `Mcp-Session-Id`); a
 * session that falls out ends with reason "evicted", in its `session` record.
 */
export class SessionTable {
  private readonly sessions = new Map<string, SessionState>();
  private heldBytes = 0;

  constructor(
    private readonly bounds: TableBounds,
    private readonly emit: (record: SessionRecord) => void,
  ) {}

  /** Sessions held, and the bytes they take. */
  get usage(): { entries: number; bytes: number } {
    return { entries: this.sessions.size, bytes: this.heldBytes };
  }

  get(server: string, session: string | null): SessionState | undefined {
    return session === null ? undefined : this.sessions.get(key(server, session));
  }

  /** Starts a session (initialize answered), or refreshes a known one. */
  start(state: Omit<SessionState, "startedAt" | "messages">, record: Omit<SessionRecord, "phase" | "server" | "session" | "transport" | "protocolVersion">): void {
    const k = key(state.server, state.session);
    this.forget(k);
    this.hold(k, { ...state, startedAt: Date.now(), messages: 0 });
    this.emit({ phase: "start", server: state.server, session: state.session, transport: state.transport, protocolVersion: state.protocolVersion, ...record });
    this.evictOverflow();
  }

  /** Remembers a session first seen mid-way (the proxy started after its initialize). */
  touch(server: string, session: string, transport: Transport, protocolVersion: string | null): SessionState {
    const k = key(server, session);
    let state = this.sessions.get(k);
    if (!state) {
      state = { server, session, transport, protocolVersion, startedAt: Date.now(), messages: 0 };
      this.hold(k, state);
      // Any client can invent Mcp-Session-Id values: sessions first seen mid-way count against the bound too.
      this.evictOverflow();
    }
    if (!state.protocolVersion && protocolVersion) state.protocolVersion = protocolVersion;
    state.messages++;
    return state;
  }

  end(server: string, session: string, reason: string, flow?: string): boolean {
    const k = key(server, session);
    const state = this.sessions.get(k);
    if (!state) return false;
    this.forget(k);
    this.emit({
      phase: "end",
      server,
      session,
      transport: state.transport,
      protocolVersion: state.protocolVersion,
      reason,
      durationMs: Date.now() - state.startedAt,
      messages: state.messages,
      ...(flow ? { flow } : {}),
    });
    return true;
  }

  private hold(k: string, state: SessionState): void {
    this.sessions.set(k, state);
    this.heldBytes += sessionBytes(k);
  }

  private forget(k: string): void {
    if (this.sessions.delete(k)) this.heldBytes -= sessionBytes(k);
  }

  private evictOverflow(): void {
    while (this.sessions.size > this.bounds.maxEntries || (this.heldBytes > this.bounds.maxBytes && this.sessions.size > 1)) {
      const oldest = this.sessions.values().next().value as SessionState;
      this.end(oldest.server, oldest.session, "evicted");
    }
  }

  all(): SessionState[] {
    return [...this.sessions.values()];
  }
}

/** The key and the state's own copy of the server and session, and the overhead. */
function sessionBytes(k: string): number {
  return 2 * textBytes(k) + ENTRY_OVERHEAD;
}

function key(server: string, session: string): string {
  return `${server}\u0000${session}`;
}
