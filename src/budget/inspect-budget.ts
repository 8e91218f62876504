/**
 * The memory the proxy may spend holding bytes to inspect them (bodies being collected, SSE events not yet
 * ended, held requests and responses), process-wide (`--max-inspect-memory`) and per peer: no one peer may
 * hold more than its share, so one hostile client or server cannot take the budget of the others.
 *
 * A holder takes a `Charge` and resizes it to what it really holds (a buffer's capacity, not its length); a
 * resize the budget cannot grant is refused and changes nothing: the holder then stops inspecting (monitor
 * mode forwards and records that; enforce mode refuses) and releases what it held.
 */

/** An eighth of the budget per peer: one hostile peer holds at most 32 MiB of the default 256 MiB. */
export const PEER_SHARE_DIVISOR = 8;
export const DEFAULT_MAX_INSPECT_MEMORY = 256 * 1024 * 1024;

export interface Charge {
  /** Bytes charged now. */
  readonly bytes: number;
  /** Charges `bytes` in place of what was charged; false (and nothing changes) when over the peer's share or the budget. */
  resize(bytes: number): boolean;
  /** Charges nothing any more (idempotent). */
  release(): void;
}

/** What a holder is told: a new charge on its peer. Absent: nothing is charged (no budget). */
export type ChargeFor = () => Charge;

export interface BudgetUsage {
  limit: number;
  peerShare: number;
  /** Bytes charged now, over all peers. */
  used: number;
  /** Most bytes any one peer holds now. */
  largestPeer: number;
  /** Peers holding bytes now. */
  peers: number;
  /** Resizes refused since start (each one a body or event not inspected, or refused in enforce mode). */
  refused: number;
}

export class InspectBudget {
  private used = 0;
  private refused = 0;
  /** Bytes per peer; a peer holding nothing has no entry (the map is as large as what is held). */
  private readonly byPeer = new Map<string, number>();

  constructor(
    readonly limit: number,
    readonly peerShare: number = Math.floor(limit / PEER_SHARE_DIVISOR),
  ) {}

  /** A charge on `peer` (a client address or an upstream host: see docs/reliability.md). */
  charge(peer: string): Charge {
    let bytes = 0;
    const resize = (next: number): boolean => {
      const delta = next - bytes;
      const held = this.byPeer.get(peer) ?? 0;
      if (delta > 0 && (held + delta > this.peerShare || this.used + delta > this.limit)) {
        this.refused++;
        return false;
      }
      this.used += delta;
      bytes = next;
      if (held + delta > 0) this.byPeer.set(peer, held + delta);
      else this.byPeer.delete(peer);
      return true;
    };
    return {
      get bytes() {
        return bytes;
      },
      resize,
      release: () => void resize(0),
    };
  }

  /** The charge maker for one peer, to hand to a decoder. */
  forPeer(peer: string): ChargeFor {
    return () => this.charge(peer);
  }

  usage(): BudgetUsage {
    let largestPeer = 0;
    for (const bytes of this.byPeer.values()) largestPeer = Math.max(largestPeer, bytes);
    return { limit: this.limit, peerShare: this.peerShare, used: this.used, largestPeer, peers: this.byPeer.size, refused: this.refused };
  }
}

/** The message of a body or event not inspected for want of budget (recorded; enforce mode refuses). */
export function overBudgetMessage(what: string): string {
  return `${what} not inspected: the inspection memory budget (--max-inspect-memory) or this peer's share of it is spent`;
}
