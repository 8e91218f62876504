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

/** Sessions seen on the wire, bounded; a session that falls out ends with reason "evicted". */
export class SessionTable {
  private readonly sessions = new Map<string, SessionState>();

  constructor(
    private readonly max: number,
    private readonly emit: (record: SessionRecord) => void,
  ) {}

  get(server: string, session: string | null): SessionState | undefined {
    return session === null ? undefined : this.sessions.get(key(server, session));
  }

  /** Starts a session (initialize answered), or refreshes a known one. */
  start(state: Omit<SessionState, "startedAt" | "messages">, record: Omit<SessionRecord, "phase" | "server" | "session" | "transport" | "protocolVersion">): void {
    const k = key(state.server, state.session);
    this.sessions.delete(k);
    this.sessions.set(k, { ...state, startedAt: Date.now(), messages: 0 });
    this.emit({ phase: "start", server: state.server, session: state.session, transport: state.transport, protocolVersion: state.protocolVersion, ...record });
    this.evictOverflow();
  }

  /** Remembers a session first seen mid-way (the proxy started after its initialize). */
  touch(server: string, session: string, transport: Transport, protocolVersion: string | null): SessionState {
    const k = key(server, session);
    let state = this.sessions.get(k);
    if (!state) {
      state = { server, session, transport, protocolVersion, startedAt: Date.now(), messages: 0 };
      this.sessions.set(k, state);
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
    this.sessions.delete(k);
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

  private evictOverflow(): void {
    while (this.sessions.size > this.max) {
      const oldest = this.sessions.values().next().value as SessionState;
      this.end(oldest.server, oldest.session, "evicted");
    }
  }

  all(): SessionState[] {
    return [...this.sessions.values()];
  }
}

function key(server: string, session: string): string {
  return `${server}\u0000${session}`;
}
