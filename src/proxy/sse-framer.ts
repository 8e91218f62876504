import { SseBlankLines } from "../body/sse-blank-lines.js";
import { GrowingBuffer } from "../budget/growing-buffer.js";
import type { Charge } from "../budget/inspect-budget.js";

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a raw event stream into whole events (each with its closing blank line), without decoding it:
 * what is passed on is exactly the bytes received. The blank lines are the decoder's (`SseBlankLines`), so an
 * event judged here is an event the decoder reads. When a blank line ends with CR at the end of a chunk, the
 * framer waits for the next byte (an LF belongs to it).
 */
export class SseFramer {
  private readonly lines = new SseBlankLines();
  /** The current event's bytes from earlier chunks: one growing buffer, charged to the inspection budget. */
  private readonly pending: GrowingBuffer;
  private boundaryPending = false;
  /** The current event outgrew the limit: its pieces pass on unjudged until it ends. */
  private oversized = false;

  constructor(
    private readonly onEvent: (raw: Buffer) => void,
    private readonly maxEventBytes: number,
    private readonly onUnjudged: (raw: Buffer) => void,
    /** Called once when an event outgrows the limit or the budget (its pieces then go to onUnjudged). */
    private readonly onOversized: (why: "too_large" | "over_budget") => void = () => {},
    /** An unterminated event the stream ended in (some readers dispatch it anyway); default: unjudged. */
    private readonly onTail: (raw: Buffer) => void = onUnjudged,
    /** Called once after the last piece of an oversized event went to onUnjudged. */
    private readonly onOversizedEnd: () => void = () => {},
    charge?: Charge,
  ) {
    this.pending = new GrowingBuffer(charge, maxEventBytes + 1);
  }

  /** True while part of an event is held back. */
  get midEvent(): boolean {
    return this.pending.length > 0 || this.oversized;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    let start = 0;
    if (this.boundaryPending) {
      this.boundaryPending = false;
      start = chunk[0] === LF ? 1 : 0;
      this.end(chunk, 0, start);
    }
    this.lines.scan(chunk, {
      blank: (lineEnd, next) => {
        if (chunk[lineEnd] === CR && next === lineEnd + 1 && next === chunk.length) {
          this.boundaryPending = true;
          return;
        }
        this.end(chunk, start, next);
        start = next;
      },
    });
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  /**
   * The stream ended: an event whose blank line ended with CR is complete and judged; whatever else is held
   * goes out as it is.
   */
  flush(): void {
    if (this.boundaryPending) {
      this.boundaryPending = false;
      this.end(Buffer.alloc(0), 0, 0);
    }
    if (this.oversized) {
      if (this.pending.length > 0) this.onUnjudged(this.take());
      this.oversized = false;
      this.onOversizedEnd();
    } else if (this.pending.length > 0) {
      const raw = this.take();
      // A tail that is too large to judge is an oversized event too.
      if (raw.length > this.maxEventBytes) this.oversizedWhole(raw);
      else this.onTail(raw);
    }
  }

  private end(chunk: Buffer, start: number, end: number): void {
    const last = chunk.subarray(start, end);
    if (this.pending.length === 0 && last.length === 0) return;
    // An event whole in one chunk is a view of it; one that spanned chunks is joined once, here.
    const raw = this.pending.length === 0 ? last : Buffer.concat([this.take(), last]);
    if (this.oversized) {
      this.onUnjudged(raw);
      this.oversized = false;
      this.onOversizedEnd();
    } else if (raw.length > this.maxEventBytes) {
      // Whole in one chunk, but larger than the decoder reads: an oversized event as if it had come in pieces.
      this.oversizedWhole(raw);
    } else {
      this.onEvent(raw);
    }
  }

  private oversizedWhole(raw: Buffer): void {
    this.onOversized("too_large");
    this.onUnjudged(raw);
    this.onOversizedEnd();
  }

  private hold(piece: Buffer): void {
    if (this.oversized) return this.onUnjudged(piece);
    const tooLarge = this.pending.length + piece.length > this.maxEventBytes && !this.boundaryPending;
    if (!tooLarge && this.pending.append(piece)) return;
    this.oversized = true;
    this.onOversized(tooLarge ? "too_large" : "over_budget");
    this.onUnjudged(this.pending.length > 0 ? Buffer.concat([this.take(), piece]) : piece);
  }

  /** Forgets what is held (the stream is gone): nothing stays charged. */
  release(): void {
    this.pending.clear();
  }

  /** The held bytes (the buffer is cleared, its charge released: nothing writes into them again). */
  private take(): Buffer {
    const raw = this.pending.view();
    this.pending.clear();
    return raw;
  }
}
