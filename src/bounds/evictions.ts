/**
 * What a bounded table says when it lets something go. Every table of the proxy is bounded by entries and
 * by bytes; past either bound it forgets its oldest (or least recently used) entries, and says so in a
 * `table_evicted` record. A flood evicts thousands of entries a second: the first eviction of a table is
 * written at once, the next ones are counted and written together at most every 10 s (and at close).
 */
/**
 * Tables that report evictions here (pending requests and sessions have records of their own as well: each
 * evicted request an `unanswered` record, each evicted session its `session` end).
 */
export type BoundedTable = "pending" | "given_up" | "sessions" | "legacy_endpoints" | "multi_round" | "tool_catalog" | "ui_feeds";

/**
 * "entries"/"bytes": the table's bound was reached; "per_client"/"per_server"/"per_stream": one peer's share
 * of it (the record names the peer); "stalled": a reader did not read.
 */
export type EvictionReason = "entries" | "bytes" | "per_client" | "per_server" | "per_stream" | "stalled";

export interface TableEvictedRecord {
  event: "table_evicted";
  table: BoundedTable;
  reason: EvictionReason;
  evicted: number;
  bytes: number;
  maxEntries: number;
  maxBytes: number;
  /** Whose share was full (per_client, per_server): `client ADDRESS` or `server HOST:PORT` (a stdio server: its name). */
  peer?: string;
  message: string;
}

export interface TableBounds {
  maxEntries: number;
  maxBytes: number;
}

export const EVICTION_REPORT_EVERY_MS = 10_000;

const WHAT: Record<BoundedTable, string> = {
  pending: "requests waiting for an answer (each also reported unanswered)",
  sessions: "sessions (each also ended in a session record)",
  given_up: "requests already reported unanswered (a late answer is no longer tied to them)",
  legacy_endpoints: "legacy HTTP+SSE endpoints",
  multi_round: "open rounds of multi-round calls",
  tool_catalog: "tool input schemas (a call to an evicted tool is not checked against its schema)",
  ui_feeds: "live web UI feeds (a page that did not read)",
};

export type EvictionSink = (record: TableEvictedRecord) => void;

/** Peers named apart in one record period; evictions of further peers are summed without a name. */
const MAX_NAMED_PEERS = 16;

interface Counted {
  reason: EvictionReason;
  peer: string | undefined;
  evicted: number;
  bytes: number;
}

/** Counts one table's evictions and writes them as records, at most one per reason (and peer) every 10 s. */
export class EvictionReport {
  /** By reason and peer: at most MAX_NAMED_PEERS peers and one unnamed sum per reason, however many peers evict. */
  private readonly counts = new Map<string, Counted>();
  private namedPeers = 0;
  private lastWritten = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly table: BoundedTable,
    private readonly bounds: TableBounds,
    private readonly sink: EvictionSink,
    private readonly now: () => number = Date.now,
  ) {}

  evicted(reason: EvictionReason, bytes: number, evicted = 1, peer?: string): void {
    let key = peer === undefined ? reason : `${reason}\u0000${peer}`;
    let c = this.counts.get(key);
    if (!c && peer !== undefined && this.namedPeers >= MAX_NAMED_PEERS) {
      key = reason;
      c = this.counts.get(key);
      peer = undefined;
    }
    if (!c) {
      c = { reason, peer, evicted: 0, bytes: 0 };
      this.counts.set(key, c);
      if (peer !== undefined) this.namedPeers++;
    }
    c.evicted += evicted;
    c.bytes += bytes;
    const wait = this.lastWritten + EVICTION_REPORT_EVERY_MS - this.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait).unref();
  }

  /** Writes what was counted since the last record (at close, and when the 10 s are up). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.counts.size === 0) return;
    this.lastWritten = this.now();
    const counted = [...this.counts.values()];
    this.counts.clear();
    this.namedPeers = 0;
    for (const c of counted) {
      try {
        this.sink({
          event: "table_evicted",
          table: this.table,
          reason: c.reason,
          evicted: c.evicted,
          bytes: c.bytes,
          maxEntries: this.bounds.maxEntries,
          maxBytes: this.bounds.maxBytes,
          ...(c.peer !== undefined ? { peer: c.peer } : {}),
          message: `${c.evicted} ${WHAT[this.table]} evicted (${describe(c.reason, this.bounds, c.peer)})`,
        });
      } catch {
        // A failing sink must not break the table that reports to it.
      }
    }
  }
}

function describe(reason: EvictionReason, b: TableBounds, peer: string | undefined): string {
  switch (reason) {
    case "entries":
      return `the table holds at most ${b.maxEntries} entries`;
    case "bytes":
      return `the table holds at most ${b.maxBytes} bytes`;
    case "per_client":
      return peer === undefined ? "clients' shares of the table are full" : `the share of the table of ${peer} is full`;
    case "per_server":
      return peer === undefined ? "one server's share of the table is full" : `the share of the table of ${peer} is full`;
    case "per_stream":
      return "one stream's share of the table is full";
    case "stalled":
      return "it did not read what was sent to it";
  }
}

/** What a string costs in memory, roughly: V8 keeps one or two bytes a character; one byte is the floor we count. */
export function textBytes(...parts: (string | null | undefined)[]): number {
  let n = 0;
  for (const p of parts) if (p) n += p.length;
  return n;
}

/** Fixed cost counted for each entry of a table (the object, its map slot, its key). */
export const ENTRY_OVERHEAD = 200;
