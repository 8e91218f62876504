const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a raw event stream into whole events (each with its closing blank line), without decoding it:
 * what is passed on is exactly the bytes received. Lines end with LF, CR or CRLF; an event ends at an
 * empty line. When a blank line ends with CR, the framer waits for the next byte (an LF belongs to it).
 */
export class SseFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private lineEmpty = true;
  private prevCr = false;
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
  ) {}

  /** True while part of an event is held back. */
  get midEvent(): boolean {
    return this.pendingBytes > 0 || this.oversized;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (this.boundaryPending) {
        this.boundaryPending = false;
        if (byte === LF) {
          this.prevCr = false;
          this.end(chunk, start, i + 1);
          start = i + 1;
          continue;
        }
        this.end(chunk, start, i);
        start = i;
      }
      if (byte === LF) {
        if (this.prevCr) {
          this.prevCr = false;
          continue;
        }
        if (this.lineEmpty) {
          this.end(chunk, start, i + 1);
          start = i + 1;
        }
        this.lineEmpty = true;
      } else if (byte === CR) {
        this.prevCr = true;
        if (this.lineEmpty) this.boundaryPending = true;
        this.lineEmpty = true;
      } else {
        this.prevCr = false;
        this.lineEmpty = false;
      }
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  }

  /** The stream ended: whatever is held goes out as it is. */
  flush(): void {
    this.boundaryPending = false;
    if (this.pendingBytes > 0) (this.oversized ? this.onUnjudged : this.onTail)(this.take());
    this.oversized = false;
  }

  private end(chunk: Buffer, start: number, end: number): void {
    if (end > start) {
      this.pending.push(chunk.subarray(start, end));
      this.pendingBytes += end - start;
    }
    if (this.pendingBytes === 0) return;
    const raw = this.take();
    if (this.oversized) this.onUnjudged(raw);
    else this.onEvent(raw);
    this.oversized = false;
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
