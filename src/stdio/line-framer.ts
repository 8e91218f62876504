/**
 * Newline-delimited framing of a byte stream (the MCP stdio transport): a line ends at "\n", whatever
 * the reads were. Lines longer than `maxLineBytes` are not kept: their first bytes are handed over once,
 * the rest as it comes, and their end is signalled with the total size, so memory stays bounded.
 */
export interface LineSink {
  /** A whole line: `content` without its "\n" (a "\r" before it is kept), `raw` as it was read. */
  line(content: Buffer, raw: Buffer): void;
  /** A line grew past the limit: its first bytes (the limit's worth, or more from the same read). */
  oversizedStart(head: Buffer): void;
  /** More of the oversized line (its end included, "\n" too when `ended`). */
  oversizedData(piece: Buffer): void;
  oversizedEnd(totalBytes: number, terminated: boolean): void;
}

const NEWLINE = 0x0a;

export class LineFramer {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of the current oversized line so far; -1 when the current line is not oversized. */
  private oversized = -1;

  constructor(
    private readonly maxLineBytes: number,
    private readonly sink: LineSink,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl + 1;
      const piece = chunk.subarray(start, end);
      start = end;
      if (this.oversized >= 0) {
        this.oversized += piece.length;
        this.sink.oversizedData(piece);
        if (nl !== -1) this.finishOversized(true);
        continue;
      }
      const contentBytes = this.pendingBytes + piece.length - (nl === -1 ? 0 : 1);
      if (contentBytes > this.maxLineBytes) {
        const head = this.take(piece);
        this.oversized = head.length;
        this.sink.oversizedStart(head);
        if (nl !== -1) this.finishOversized(true);
        continue;
      }
      if (nl === -1) {
        // Copied: the reader may reuse its buffer, and a small slice would pin a large chunk.
        this.pending.push(Buffer.from(piece));
        this.pendingBytes += piece.length;
        continue;
      }
      const raw = this.take(piece);
      this.sink.line(raw.subarray(0, raw.length - 1), raw);
    }
  }

  /** The stream ended: an unterminated last line is still a line. */
  end(): void {
    if (this.oversized >= 0) {
      this.finishOversized(false);
      return;
    }
    if (this.pendingBytes === 0) return;
    const raw = this.take(Buffer.alloc(0));
    this.sink.line(raw, raw);
  }

  /** Bytes held for a line not yet complete. */
  get held(): number {
    return this.pendingBytes;
  }

  private take(last: Buffer): Buffer {
    const joined = this.pending.length === 0 ? Buffer.from(last) : Buffer.concat([...this.pending, last]);
    this.pending = [];
    this.pendingBytes = 0;
    return joined;
  }

  private finishOversized(terminated: boolean): void {
    const total = this.oversized;
    this.oversized = -1;
    this.sink.oversizedEnd(total, terminated);
  }
}
