import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { ReadGate } from "./read-gate.js";

/**
 * Shares the event loop between peers (a client by address, an upstream by host and port: `peer-key.ts`).
 * Each peer is charged the loop time the proxy spends on what it sends (its body chunks forwarded and tapped,
 * its bodies' decoding at their end, its exchanges' heads and records), plus a constant per network chunk for
 * Node's own parsing, which cannot be timed from here. Charges decay (half-life 100 ms): a peer's cost is its
 * share of the loop over the last few hundred milliseconds.
 *
 * While the loop is busy, a peer that costs more than 1.5 times any other active peer that shares none of its
 * exchanges has its reading paused (its `ReadGate` closes: every body it sends stops being read, so its bytes
 * wait in its own socket and TCP holds it back), until its cost has decayed to the other's. A peer alone, or
 * with only the peers of its own exchanges (a client and the one server it talks to), or on an idle loop, is
 * never paused: the scheduling only ever gives the loop to someone else who wants it. No pause lasts longer
 * than 500 ms: then the peer reads again (for 50 ms of loop time at least), so an exchange waiting on it
 * always moves on.
 */

const HALF_LIFE_MS = 100;
/** A decayed sum of charges over this is a share of the loop (the mean age of a charge is HALF_LIFE / ln 2). */
const MEAN_AGE_MS = HALF_LIFE_MS / Math.LN2;
const TICK_MS = 20;
/**
 * A peer charged within this is active (it wants the loop). Long: a peer starved by another may get one
 * step in a second (libuv reads a busy socket up to 32 times a turn), and must still count.
 */
const ACTIVE_MS = 1_000;
/** The loop is busy when it ran this share of the time over the last ticks (smoothed). */
const BUSY_UTILIZATION = 0.6;
/** Paused past this many times the heaviest other peer's cost; read again at 1× (hysteresis). */
const PAUSE_FACTOR = 1.5;
const MAX_PAUSE_MS = 500;
/** The loop time a peer resumed after MAX_PAUSE_MS may spend before it is paused again. */
const RUN_MS = 50;
/** Below this share of the loop a peer is never paused (an idle loop's noise). */
const MIN_PAUSED_SHARE = 0.05;
/** Node's parser work for one network chunk (llhttp's callback, the message's push and `data` event). */
export const CHUNK_COST_MS = 0.002;

export interface ReadSchedulerClock {
  now(): number;
  /** The loop's utilization since the last call (0..1). */
  utilization(): number;
}

/** What a peer's paused sources keep in Node's buffers, in chunks (coalesce.ts bounds it). */
export interface HeldChunks {
  chunks: number;
}

/** One direction of one exchange, as its reader sees it. */
export interface ReadTurn {
  /** Closed while the peer is paused. */
  readonly gate: ReadGate;
  readonly held: HeldChunks;
  /** Charges `ms` of loop time to the peer. */
  spent(ms: number): void;
}

export interface ReadSchedulerUsage {
  /** Peers known now (with exchanges in flight or a cost not yet decayed). */
  peers: number;
  /** Peers whose reading is paused now. */
  paused: number;
  /** Pauses since start. */
  pauses: number;
  /** The loop's utilization, smoothed over the last ticks. */
  loopUtilization: number;
}

interface PeerState {
  readonly key: string;
  readonly gate: ReadGate;
  readonly held: HeldChunks;
  /** Decayed sum of charges (ms). */
  cost: number;
  lastCharged: number;
  exchanges: number;
  /**
   * Peers sharing an exchange with this one: how many in flight, and when the last one ended (a client between
   * two requests to its server is still that server's partner: pausing one would only idle the other).
   */
  readonly partners: Map<string, { exchanges: number; until: number }>;
  /** Paused past this cost (Infinity: not now). */
  pauseAt: number;
  release: (() => void) | null;
  pausedAt: number;
  /** Loop time it may still spend before it may be paused again (RUN_MS after the longest pause). */
  runLeft: number;
}

export class ReadScheduler {
  private readonly peers = new Map<string, PeerState>();
  private timer: NodeJS.Timeout | null = null;
  private lastTick: number;
  private utilization = 0;
  private pauses = 0;

  constructor(private readonly clock: ReadSchedulerClock = loopClock()) {
    this.lastTick = clock.now();
  }

  /**
   * An exchange between `client` and `server` starts: its two turns (the request body read from the client,
   * the response read from the server), and the function to call once when it ends.
   */
  exchange(client: string, server: string): { request: ReadTurn; response: ReadTurn; end(): void } {
    const c = this.enter(client, server);
    const s = this.enter(server, client);
    let ended = false;
    return {
      request: this.turn(c),
      response: this.turn(s),
      end: () => {
        if (ended) return;
        ended = true;
        this.leave(c, server);
        this.leave(s, client);
      },
    };
  }

  usage(): ReadSchedulerUsage {
    let paused = 0;
    for (const p of this.peers.values()) if (p.release) paused++;
    return { peers: this.peers.size, paused, pauses: this.pauses, loopUtilization: Math.round(this.utilization * 100) / 100 };
  }

  /** Stops the ticks and reads every peer again (the proxy is stopping). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const p of this.peers.values()) this.resume(p);
  }

  /** One scheduling step; public for tests with a clock of their own. */
  tick(): void {
    const now = this.clock.now();
    const decay = Math.pow(0.5, (now - this.lastTick) / HALF_LIFE_MS);
    this.lastTick = now;
    this.utilization = 0.5 * this.utilization + 0.5 * this.clock.utilization();
    for (const p of this.peers.values()) p.cost *= decay;
    const busy = this.utilization >= BUSY_UTILIZATION;
    const ranked = busy ? this.activeByCost(now) : [];
    for (const p of [...this.peers.values()]) {
      for (const key of p.partners.keys()) this.partnered(p, key, now); // forgets partners of long ago
      const other = busy ? this.heaviestOther(p, ranked, now) : 0;
      const threshold = other > 0 ? Math.max(other * PAUSE_FACTOR, MIN_PAUSED_SHARE * MEAN_AGE_MS) : Infinity;
      if (p.release) {
        if (other === 0 || p.cost <= other) {
          this.resume(p);
          p.pauseAt = threshold;
        } else if (now - p.pausedAt >= MAX_PAUSE_MS) {
          // Paused long enough: a short run, whatever it costs, so that whatever waits on this peer moves on.
          this.resume(p);
          p.pauseAt = threshold;
          p.runLeft = RUN_MS;
        }
        continue;
      }
      p.pauseAt = threshold;
      if (p.runLeft <= 0 && p.cost > p.pauseAt) this.pause(p, now);
      else if (p.exchanges === 0 && p.cost < 0.001) this.peers.delete(p.key);
    }
    if (this.peers.size === 0) this.stopTicking();
  }

  private enter(key: string, partner: string): PeerState {
    let p = this.peers.get(key);
    if (!p) {
      p = { key, gate: new ReadGate(), held: { chunks: 0 }, cost: 0, lastCharged: -Infinity, exchanges: 0, partners: new Map(), pauseAt: Infinity, release: null, pausedAt: 0, runLeft: 0 };
      this.peers.set(key, p);
    }
    p.exchanges++;
    const shared = p.partners.get(partner) ?? { exchanges: 0, until: 0 };
    shared.exchanges++;
    p.partners.set(partner, shared);
    this.startTicking();
    return p;
  }

  private leave(p: PeerState, partner: string): void {
    p.exchanges--;
    const shared = p.partners.get(partner);
    if (!shared) return;
    shared.exchanges--;
    shared.until = this.clock.now() + ACTIVE_MS;
  }

  private turn(p: PeerState): ReadTurn {
    const spent = (ms: number): void => {
      p.cost += ms;
      p.lastCharged = this.clock.now();
      if (p.runLeft > 0) p.runLeft -= ms;
      if (p.runLeft <= 0 && p.cost > p.pauseAt && !p.release) this.pause(p, p.lastCharged);
    };
    return { gate: p.gate, held: p.held, spent };
  }

  /**
   * The peers that want the loop (charged within ACTIVE_MS, or paused), costliest first: ranked once a tick,
   * so that a tick costs about a sort of the peers, not their square (one client can open exchanges to
   * thousands of servers, each a peer).
   */
  private activeByCost(now: number): PeerState[] {
    const active: PeerState[] = [];
    for (const q of this.peers.values()) if (q.release !== null || now - q.lastCharged <= ACTIVE_MS) active.push(q);
    return active.sort((a, b) => b.cost - a.cost);
  }

  /** The cost of the heaviest of `ranked` that shares no exchange with `p` (0: none). */
  private heaviestOther(p: PeerState, ranked: readonly PeerState[], now: number): number {
    for (const q of ranked) if (q !== p && !this.partnered(p, q.key, now)) return q.cost;
    return 0;
  }

  private partnered(p: PeerState, key: string, now: number): boolean {
    const shared = p.partners.get(key);
    if (!shared) return false;
    if (shared.exchanges > 0 || now < shared.until) return true;
    p.partners.delete(key);
    return false;
  }

  private pause(p: PeerState, now: number): void {
    p.release = p.gate.hold();
    p.pausedAt = now;
    p.pauseAt = Infinity;
    p.runLeft = 0;
    this.pauses++;
  }

  private resume(p: PeerState): void {
    const release = p.release;
    p.release = null;
    release?.();
  }

  private startTicking(): void {
    if (this.timer) return;
    this.lastTick = this.clock.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  private stopTicking(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** The real clock: wall time and the event loop's own utilization. */
function loopClock(): ReadSchedulerClock {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    now: () => performance.now(),
    utilization: () => {
      const next = performance.eventLoopUtilization();
      const u = performance.eventLoopUtilization(next, last).utilization;
      last = next;
      return u;
    },
  };
}
