import { SseBlankLines } from "../body/sse-blank-lines.js";

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
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private boundaryPending = false;
  /** The current event outgrew the limit: its pieces pass on unjudged until it ends. */
  private oversized = false;

  constructor(
    private readonly onEvent: (raw: Buffer) => void,
    private readonly maxEventBytes: number,
    private readonly onUnjudged: (raw: Buffer) => void,
    /** Called once when an event outgrows the limit (its pieces then go to onUnjudged). */
    private readonly onOversized: () => void = () => {},
    /** An unterminated event the stream ended in (some readers dispatch it anyway); default: unjudged. */
    private readonly onTail: (raw: Buffer) => void = onUnjudged,
    /** Called once after the last piece of an oversized event went to onUnjudged. */
    private readonly onOversizedEnd: () => void = () => {},
  ) {}

  /** True while part of an event is held back. */
  get midEvent(): boolean {
    return this.pendingBytes > 0 || this.oversized;
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
      if (this.pendingBytes > 0) this.onUnjudged(this.take());
      this.oversized = false;
      this.onOversizedEnd();
    } else if (this.pendingBytes > 0) {
      const raw = this.take();
      // A tail that is too large to judge is an oversized event too.
      if (raw.length > this.maxEventBytes) this.oversizedWhole(raw);
      else this.onTail(raw);
    }
  }

  private end(chunk: Buffer, start: number, end: number): void {
    if (end > start) {
      this.pending.push(chunk.subarray(start, end));
      this.pendingBytes += end - start;
    }
    if (this.pendingBytes === 0) return;
    const raw = this.take();
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
    this.onOversized();
    this.onUnjudged(raw);
    this.onOversizedEnd();
  }

  private hold(piece: Buffer): void {
    this.pending.push(piece);
    this.pendingBytes += piece.length;
    if (this.pendingBytes > this.maxEventBytes && !this.boundaryPending) {
      if (!this.oversized) this.onOversized();
      this.oversized = true;
      this.onUnjudged(this.take());
    }
  }

  private take(): Buffer {
    const raw = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return raw;
  }
}
