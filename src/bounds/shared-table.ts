import { EvictionReport, type BoundedTable, type EvictionReason, type EvictionSink, type TableBounds } from "./evictions.js";

/**
 * A table shared by peers: bounded by entries and bytes in all, and each peer (a client by address, a server
 * by host and port or stdio name: see src/mcp/table-peer.ts) to a share of that. Past its share a peer's own
 * oldest entries go, never another's: one hostile peer cannot evict what honest peers hold. Only when many
 * peers together fill the table do the oldest entries of all go. Every eviction is reported
 * (`table_evicted`, naming the peer whose share was full) and handed to `onEvicted`.
 */

/** Each peer may hold an eighth of a table (as of the inspection budget: src/budget/inspect-budget.ts). */
export const TABLE_SHARE_DIVISOR = 8;

export function peerShareOf(bounds: TableBounds, divisor = TABLE_SHARE_DIVISOR): TableBounds {
  return { maxEntries: Math.max(1, Math.floor(bounds.maxEntries / divisor)), maxBytes: Math.floor(bounds.maxBytes / divisor) };
}

/** A peer's share full: "per_client" or "per_server", by the name's kind. */
export function shareReason(peer: string): EvictionReason {
  return peer.startsWith("client ") ? "per_client" : "per_server";
}

/** Longest peer name written in a record (a stdio server's name, a host name). */
const MAX_PEER_CHARS = 300;

interface Held<V> {
  value: V;
  peer: string;
  bytes: number;
}

interface PeerHolding {
  /** Its keys, oldest first. */
  keys: Set<string>;
  bytes: number;
}

export class SharedTable<V> {
  /** Oldest first (a Map keeps insertion order). */
  private readonly entries = new Map<string, Held<V>>();
  private readonly peers = new Map<string, PeerHolding>();
  private heldBytes = 0;
  private readonly report: EvictionReport;

  constructor(
    table: BoundedTable,
    readonly bounds: TableBounds,
    report: EvictionSink,
    /** Told of each entry evicted (not of entries deleted), after it left the table. */
    private readonly onEvicted: (value: V, key: string) => void = () => undefined,
    readonly share: TableBounds = peerShareOf(bounds),
  ) {
    this.report = new EvictionReport(table, bounds, report);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Entries held, and the bytes they take. */
  get usage(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.heldBytes };
  }

  /** What one peer holds. */
  usageOf(peer: string): { entries: number; bytes: number } {
    const p = this.peers.get(peer);
    return { entries: p?.keys.size ?? 0, bytes: p?.bytes ?? 0 };
  }

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  values(): V[] {
    return [...this.entries.values()].map((h) => h.value);
  }

  /** Key and value of each entry, oldest first; deleting the entry at hand meanwhile is safe (a Map's iteration is). */
  *keyed(): Generator<[string, V]> {
    for (const [key, held] of this.entries) yield [key, held.value];
  }

  /** Holds `value` under `key` (as the newest entry, charged to `peer`), then evicts what its bounds no longer allow. */
  set(key: string, value: V, peer: string, bytes: number): void {
    this.delete(key);
    this.entries.set(key, { value, peer, bytes });
    this.heldBytes += bytes;
    let holding = this.peers.get(peer);
    if (!holding) {
      holding = { keys: new Set(), bytes: 0 };
      this.peers.set(peer, holding);
    }
    holding.keys.add(key);
    holding.bytes += bytes;
    // The entry just held stays: a table never evicts what it was just given.
    while (holding.keys.size > 1 && (holding.keys.size > this.share.maxEntries || holding.bytes > this.share.maxBytes)) {
      this.evict(holding.keys.values().next().value as string, shareReason(peer));
    }
    while (this.entries.size > 1 && (this.entries.size > this.bounds.maxEntries || this.heldBytes > this.bounds.maxBytes)) {
      this.evict(this.entries.keys().next().value as string, this.entries.size > this.bounds.maxEntries ? "entries" : "bytes");
    }
  }

  /** Removes an entry without reporting it (it was answered, ended, replaced); returns its value. */
  delete(key: string): V | undefined {
    const held = this.entries.get(key);
    if (!held) return undefined;
    this.entries.delete(key);
    this.heldBytes -= held.bytes;
    const holding = this.peers.get(held.peer)!;
    holding.keys.delete(key);
    holding.bytes -= held.bytes;
    if (holding.keys.size === 0) this.peers.delete(held.peer);
    return held.value;
  }

  /** Writes the evictions still counted (at shutdown). */
  flushEvictions(): void {
    this.report.flush();
  }

  private evict(key: string, reason: EvictionReason): void {
    const held = this.entries.get(key)!;
    this.delete(key);
    const named = reason === "per_client" || reason === "per_server";
    this.report.evicted(reason, held.bytes, 1, named ? held.peer.slice(0, MAX_PEER_CHARS) : undefined);
    this.onEvicted(held.value, key);
  }
}
