/**
 * The bytes of messages waiting for their judgement (it asks shared state: src/state/), or behind one that
 * is, per stream (an exchange; a stdio direction) and process-wide. Nothing is ever refused or dropped here:
 * a stream past its budget, or one that adds while the process is past its own, is paused at its source
 * (its sender is no longer read) until what waits is written, so it costs what one read brings at most over
 * the budget. A stream that waits for nothing is never paused.
 */

/** Per stream: a server streaming fast behind a message that waits for Redis holds this much at most. */
export const WAITING_BYTES_PER_STREAM = 4 * 1024 * 1024;
/** Process-wide: many streams, each within its budget, together hold this much at most. */
export const WAITING_BYTES_TOTAL = 64 * 1024 * 1024;

export interface WaitingUsage {
  perStream: number;
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

interface StreamState {
  bytes: number;
  source: PauseSource | null;
  /** Set while the source is paused: what resumes it. */
  resume: (() => void) | null;
}

export class WaitingBudget {
  private readonly streams = new Map<string, StreamState>();
  private used = 0;
  private peak = 0;
  private peakStream = 0;
  private pauses = 0;
  private pausedCount = 0;
  /** A stream was paused because the process-wide total was passed: they resume once it is half spent. */
  private heldByTotal = false;

  constructor(
    readonly perStream = WAITING_BYTES_PER_STREAM,
    readonly limit = WAITING_BYTES_TOTAL,
  ) {}

  /** How to pause `stream`'s source; until `detach`, the budget pauses it when it must. */
  attach(stream: string, source: PauseSource): void {
    this.state(stream).source = source;
  }

  /** The stream's source is gone (its exchange ended): it is resumed if paused, and never paused again. */
  detach(stream: string): void {
    const s = this.streams.get(stream);
    if (!s) return;
    this.resume(s);
    s.source = null;
    this.forgetIfIdle(stream, s);
  }

  /** `bytes` of `stream` wait from now until `remove`. */
  add(stream: string, bytes: number): void {
    const s = this.state(stream);
    s.bytes += bytes;
    this.used += bytes;
    this.peak = Math.max(this.peak, this.used);
    this.peakStream = Math.max(this.peakStream, s.bytes);
    // Once streams wait for the total to be half spent, every stream that adds meanwhile waits with them:
    // others adding could otherwise keep it above half for good.
    const overTotal = this.used > (this.heldByTotal ? this.limit / 2 : this.limit);
    if (s.resume === null && s.source !== null && (s.bytes > this.perStream || overTotal)) {
      if (overTotal) this.heldByTotal = true;
      this.pauses++;
      this.pausedCount++;
      s.resume = s.source();
    }
  }

  /** Bytes of `stream` no longer waiting (their record is written). */
  remove(stream: string, bytes: number): void {
    const s = this.streams.get(stream);
    if (!s) return;
    s.bytes -= bytes;
    this.used -= bytes;
    if (this.heldByTotal && this.used <= this.limit / 2) {
      this.heldByTotal = false;
      for (const other of this.streams.values()) if (other.bytes <= this.perStream / 2) this.resume(other);
    } else if (s.bytes <= this.perStream / 2 && (s.bytes === 0 || !this.heldByTotal)) {
      this.resume(s);
    }
    this.forgetIfIdle(stream, s);
  }

  /** Bytes waiting in `stream` now. */
  bytesOf(stream: string): number {
    return this.streams.get(stream)?.bytes ?? 0;
  }

  usage(): WaitingUsage {
    return { perStream: this.perStream, limit: this.limit, used: this.used, streams: [...this.streams.values()].filter((s) => s.bytes > 0).length, paused: this.pausedCount, peak: this.peak, peakStream: this.peakStream, pauses: this.pauses };
  }

  private state(stream: string): StreamState {
    let s = this.streams.get(stream);
    if (!s) this.streams.set(stream, (s = { bytes: 0, source: null, resume: null }));
    return s;
  }

  private resume(s: StreamState): void {
    const resume = s.resume;
    if (resume === null) return;
    s.resume = null;
    this.pausedCount--;
    resume();
  }

  /** A stream with nothing waiting and no source is forgotten: the map is as large as what is attached or held. */
  private forgetIfIdle(stream: string, s: StreamState): void {
    if (s.bytes === 0 && s.source === null) this.streams.delete(stream);
  }
}
