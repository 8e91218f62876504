import { ENTRY_OVERHEAD, textBytes } from "../../bounds/evictions.js";
import type { Direction } from "../correlator.js";

export interface Creating {
  call: string;
  tool: string | undefined;
}

/** Requests of one scope that asked for a task and are not answered yet: at most this many are kept. */
const PER_SCOPE = 16;

/**
 * Requests that asked for a task and wait for the answer that creates it, by (server, session, direction).
 * A status notification that comes before that answer is tied to the call when exactly one such request is
 * waiting in its scope. Bounded: PER_SCOPE per scope, `maxEntries` and `maxBytes` in all (the oldest scope
 * goes first). Its call and tool strings are counted here too: a request the correlator has let go (given up,
 * evicted) is still waited on here, and would keep them alive.
 */
export class AwaitingCreation {
  private readonly scopes = new Map<string, Creating[]>();
  private entries = 0;
  private bytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  add(server: string, session: string | null, direction: Direction, creating: Creating): void {
    const key = scopeKey(server, session, direction);
    const list = this.scopes.get(key) ?? [];
    this.scopes.delete(key);
    list.push(creating);
    this.entries++;
    this.bytes += entryBytes(key, creating);
    if (list.length > PER_SCOPE) {
      this.bytes -= entryBytes(key, list.shift()!);
      this.entries--;
    }
    this.scopes.set(key, list);
    while (this.entries > this.maxEntries || this.bytes > this.maxBytes) this.deleteScope(this.scopes.keys().next().value as string);
  }

  remove(server: string, session: string | null, direction: Direction, call: string): void {
    const key = scopeKey(server, session, direction);
    const list = this.scopes.get(key);
    if (!list) return;
    const at = list.findIndex((c) => c.call === call);
    if (at !== -1) {
      this.bytes -= entryBytes(key, list.splice(at, 1)[0]!);
      this.entries--;
    }
    if (list.length === 0) this.scopes.delete(key);
  }

  /** The one request of the scope waiting for its task, when there is exactly one. */
  only(server: string, session: string | null, direction: Direction): Creating | undefined {
    const list = this.scopes.get(scopeKey(server, session, direction));
    return list?.length === 1 ? list[0] : undefined;
  }

  dropScope(server: string, session: string): void {
    for (const direction of ["client_to_server", "server_to_client"] as const) this.deleteScope(scopeKey(server, session, direction));
  }

  private deleteScope(key: string): void {
    for (const creating of this.scopes.get(key) ?? []) {
      this.entries--;
      this.bytes -= entryBytes(key, creating);
    }
    this.scopes.delete(key);
  }
}

function entryBytes(key: string, c: Creating): number {
  return textBytes(key, c.call, c.tool) + ENTRY_OVERHEAD;
}

function scopeKey(server: string, session: string | null, direction: Direction): string {
  return JSON.stringify([server, session, direction]);
}
