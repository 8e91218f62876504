/**
 * The bytes of messages waiting for their judgement (it asks shared state: src/state/), or behind one that
 * is, per stream (an exchange; a stdio direction), per peer that sent them, and process-wide. Nothing is ever
 * refused or dropped here: a stream past its budget, one that adds while its sender is past its share, or
 * one that adds while the process is past its total, is paused at its source (its senders are no longer
 * read) until what waits is written, so each costs what one read brings at most over its bound. A stream
 * that waits for nothing is never paused, unless one of its peers is past its share.
 */
import { PEER_SHARE_DIVISOR } from "./inspect-budget.js";

/** Per stream: a server streaming fast behind a message that waits for Redis holds this much at most. */
export const WAITING_BYTES_PER_STREAM = 4 * 1024 * 1024;
/** Process-wide: many streams, each within its budget, together hold this much at most (an eighth per peer). */
export const WAITING_BYTES_TOTAL = 64 * 1024 * 1024;

export interface WaitingUsage {
  perStream: number;
  peerShare: number;
  limit: number;
  /** Bytes waiting now, over all streams. */
  used: number;
  /** Streams with bytes waiting now. */
  streams: number;
  /** Streams whose source is paused now. */
  paused: number;
  /** The most bytes ever waiting at once, process-wide and in one stream. */
  peak: number;
  peakStream: number;
  /** Times a stream was paused since start. */
  pauses: number;
}

/** Stops a stream's source; returns what starts it again. */
export type PauseSource = () => () => void;

/** Who sends a stream's messages, by direction (`proxy/peer-key.ts` names them). */
export interface StreamPeers {
  client_to_server: string;
  server_to_client: string;
}

interface Peer {
  name: string;
  bytes: number;
  /** Streams paused because this peer passed its share. */
  paused: Set<StreamState>;
}

interface StreamState {
  bytes: number;
  source: PauseSource | null;
  peers: StreamPeers | null;
  /** Set while the source is paused: what resumes it. */
  resume: (() => void) | null;
  /** The peer whose share was passed when the stream was paused, if that was why. */
  pausedFor: Peer | null;
}

export class WaitingBudget {
  readonly peerShare: number;
  private readonly streams = new Map<string, StreamState>();
  private readonly peers = new Map<string, Peer>();
  private readonly paused = new Set<StreamState>();
  private used = 0;
  private peak = 0;
  private peakStream = 0;
  private pauses = 0;
  /** A stream was paused because the process-wide total was passed: they resume once it is half spent. */
  private heldByTotal = false;

  constructor(
    readonly perStream = WAITING_BYTES_PER_STREAM,
    readonly limit = WAITING_BYTES_TOTAL,
  ) {
    this.peerShare = Math.floor(limit / PEER_SHARE_DIVISOR);
  }

  /**
   * How to pause `stream`'s source, and who sends on it; until `detach`, the budget pauses it when it must. A
   * new stream of a peer past its share is paused from the start: each new exchange would bring one more
   * body to wait.
   */
  attach(stream: string, source: PauseSource, peers?: StreamPeers): void {
    const s = this.state(stream);
    s.source = source;
    s.peers = peers ?? null;
    if (!peers || s.resume !== null) return;
    const over = [peers.client_to_server, peers.server_to_client].map((name) => this.peers.get(name)).find((p) => p !== undefined && this.pastShare(p));
    if (over) this.pause(s, over);
  }

  /** The stream's source is gone (its exchange ended): it is resumed if paused, and never paused again. */
  detach(stream: string): void {
    const s = this.streams.get(stream);
    if (!s) return;
    this.resume(s);
    s.source = null;
    this.forgetIfIdle(stream, s);
  }

  /** `bytes` of `stream`, sent `from` one of its peers, wait from now until the returned function is called (once). */
  hold(stream: string, bytes: number, from?: keyof StreamPeers): () => void {
    const s = this.state(stream);
    const name = from && s.peers ? s.peers[from] : null;
    const peer = name === null ? null : this.peer(name);
    s.bytes += bytes;
    this.used += bytes;
    if (peer) peer.bytes += bytes;
    this.peak = Math.max(this.peak, this.used);
    this.peakStream = Math.max(this.peakStream, s.bytes);
    // Once streams wait for the total to be half spent, every stream that adds meanwhile waits with them:
    // others adding could otherwise keep it above half for good.
    const overTotal = this.used > (this.heldByTotal ? this.limit / 2 : this.limit);
    const overShare = peer !== null && this.pastShare(peer);
    if (s.resume === null && s.source !== null && (s.bytes > this.perStream || overTotal || overShare)) {
      if (overTotal) this.heldByTotal = true;
      this.pause(s, overShare ? peer : null);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(stream, s, peer, bytes);
    };
  }

  usage(): WaitingUsage {
    const streams = [...this.streams.values()].filter((s) => s.bytes > 0).length;
    return { perStream: this.perStream, peerShare: this.peerShare, limit: this.limit, used: this.used, streams, paused: this.paused.size, peak: this.peak, peakStream: this.peakStream, pauses: this.pauses };
  }

  private release(stream: string, s: StreamState, peer: Peer | null, bytes: number): void {
    s.bytes -= bytes;
    this.used -= bytes;
    if (peer) peer.bytes -= bytes;
    if (this.heldByTotal && this.used <= this.limit / 2) {
      this.heldByTotal = false;
      for (const other of [...this.paused]) this.resumeIfDrained(other);
    } else {
      this.resumeIfDrained(s);
    }
    if (peer && peer.bytes <= this.peerShare / 2) for (const other of [...peer.paused]) this.resumeIfDrained(other);
    if (peer) this.forgetPeerIfIdle(peer);
    this.forgetIfIdle(stream, s);
  }

  /** Past its share; once some of its streams wait for half of it to be free, past half (as for the total). */
  private pastShare(p: Peer): boolean {
    return p.bytes > (p.paused.size > 0 ? this.peerShare / 2 : this.peerShare);
  }

  private pause(s: StreamState, pausedFor: Peer | null): void {
    if (pausedFor) {
      s.pausedFor = pausedFor;
      pausedFor.paused.add(s);
    }
    this.pauses++;
    this.paused.add(s);
    s.resume = s.source!();
  }

  /** Resumed once half of its budget, half of the share it passed, and (unless it holds nothing) half the total are free. */
  private resumeIfDrained(s: StreamState): void {
    if (s.bytes > this.perStream / 2) return;
    if (s.pausedFor && s.pausedFor.bytes > this.peerShare / 2) return;
    if (this.heldByTotal && s.bytes > 0) return;
    this.resume(s);
  }

  private resume(s: StreamState): void {
    const resume = s.resume;
    if (resume === null) return;
    s.resume = null;
    const pausedFor = s.pausedFor;
    s.pausedFor = null;
    if (pausedFor) {
      pausedFor.paused.delete(s);
      this.forgetPeerIfIdle(pausedFor);
    }
    this.paused.delete(s);
    resume();
  }

  private state(stream: string): StreamState {
    let s = this.streams.get(stream);
    if (!s) this.streams.set(stream, (s = { bytes: 0, source: null, peers: null, resume: null, pausedFor: null }));
    return s;
  }

  private peer(name: string): Peer {
    let p = this.peers.get(name);
    if (!p) this.peers.set(name, (p = { name, bytes: 0, paused: new Set() }));
    return p;
  }

  private forgetPeerIfIdle(p: Peer): void {
    if (p.bytes === 0 && p.paused.size === 0 && this.peers.get(p.name) === p) this.peers.delete(p.name);
  }

  /** A stream with nothing waiting and no source is forgotten: the map is as large as what is attached or held. */
  private forgetIfIdle(stream: string, s: StreamState): void {
    if (s.bytes === 0 && s.source === null && this.streams.get(stream) === s) this.streams.delete(stream);
  }
}
