import type { Direction } from "../mcp/correlator.js";
import type { RequestId } from "../mcp/jsonrpc.js";

/** What was done with a held message. */
export type HeldAction = "forwarded" | "edited" | "dropped" | "timeout";

export type HoldOutcome = { action: "forwarded" } | { action: "edited"; message: unknown } | { action: "dropped"; reason?: string } | { action: "timeout" };

/** What a held message is about: shown in the UI's list and written in its `intercept` record. */
export interface HeldInfo {
  flow: string;
  /** Whose share of the queue it takes: the client that sent it, or the server (as the inspection budget names them). */
  peer: string;
  server: string;
  session: string | null;
  transport: string;
  direction: Direction;
  id?: RequestId | null;
  method?: string;
  tool?: string;
}

export interface HeldEntry extends HeldInfo {
  /** The queue's own id of the entry (what the UI acts on). */
  hold: string;
  heldAt: number;
  /** The message as it would go out (a batch: the array). */
  message: unknown;
  bytes: number;
}

export interface HoldQueueLimits {
  /** Bytes of held messages at most; a message past it is not held: it is dropped (fail closed). */
  maxBytes: number;
  maxEntries: number;
  /** What one peer may hold at most (default: the whole queue), so that no one peer fills it for the others. */
  maxPeerBytes?: number;
  maxPeerEntries?: number;
  /** How long a message waits for a person before it is dropped. */
  timeoutMs: number;
}

/** Why a message could not be held (no room in the queue, or in its peer's share): it is dropped, and its record says so. */
export type HoldRefusal = "queue_full";

interface Waiting {
  entry: HeldEntry;
  timer: NodeJS.Timeout;
  settle(outcome: HoldOutcome): void;
}

/**
 * Messages waiting for a person to forward, edit or drop them. Bounded in bytes and in entries; each waits at
 * most `timeoutMs`, then is dropped (fail closed: nothing unreleased goes out by default).
 */
export class HoldQueue {
  private readonly waiting = new Map<string, Waiting>();
  private heldBytes = 0;
  /** Per peer with something held: its entries and bytes. */
  private readonly peers = new Map<string, { entries: number; bytes: number }>();
  private next = 1;
  private readonly listeners = new Set<() => void>();

  constructor(readonly limits: HoldQueueLimits) {}

  get bytes(): number {
    return this.heldBytes;
  }

  get size(): number {
    return this.waiting.size;
  }

  /** Holds `message` until it is released or times out; a refusal when there is no room for it. */
  hold(info: HeldInfo, message: unknown, bytes: number): Promise<HoldOutcome> | HoldRefusal {
    if (this.waiting.size >= this.limits.maxEntries || this.heldBytes + bytes > this.limits.maxBytes) return "queue_full";
    const peer = this.peers.get(info.peer) ?? { entries: 0, bytes: 0 };
    if (peer.entries >= (this.limits.maxPeerEntries ?? this.limits.maxEntries) || peer.bytes + bytes > (this.limits.maxPeerBytes ?? this.limits.maxBytes)) return "queue_full";
    const hold = String(this.next++);
    const entry: HeldEntry = { ...info, hold, heldAt: Date.now(), message, bytes };
    this.heldBytes += bytes;
    this.peers.set(info.peer, { entries: peer.entries + 1, bytes: peer.bytes + bytes });
    const done = new Promise<HoldOutcome>((resolve) => {
      const timer = setTimeout(() => this.settle(hold, { action: "timeout" }), this.limits.timeoutMs);
      timer.unref();
      this.waiting.set(hold, { entry, timer, settle: resolve });
    });
    this.changed();
    return done;
  }

  list(): HeldEntry[] {
    return [...this.waiting.values()].map((w) => w.entry);
  }

  get(hold: string): HeldEntry | undefined {
    return this.waiting.get(hold)?.entry;
  }

  /** Releases a held message; false when it is no longer held (released already, or timed out). */
  settle(hold: string, outcome: HoldOutcome): boolean {
    const w = this.waiting.get(hold);
    if (!w) return false;
    this.waiting.delete(hold);
    clearTimeout(w.timer);
    this.heldBytes -= w.entry.bytes;
    const peer = this.peers.get(w.entry.peer)!;
    if (peer.entries === 1) this.peers.delete(w.entry.peer);
    else this.peers.set(w.entry.peer, { entries: peer.entries - 1, bytes: peer.bytes - w.entry.bytes });
    w.settle(outcome);
    this.changed();
    return true;
  }

  /** Every held message dropped (the proxy stops). */
  dropAll(reason?: string): void {
    for (const hold of [...this.waiting.keys()]) this.settle(hold, { action: "dropped", ...(reason ? { reason } : {}) });
  }

  /** The held messages of one exchange dropped: its client went away, nobody is left to send them for. */
  dropFlow(flow: string, reason: string): void {
    for (const [hold, w] of [...this.waiting]) if (w.entry.flow === flow) this.settle(hold, { action: "dropped", reason });
  }

  /** Called whenever the list changes; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
