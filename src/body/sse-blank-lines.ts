const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

export interface BlankLineHandler {
  /** The chunk starts with the LF of a CRLF whose CR ended the previous chunk (called before any `blank`). */
  crlfContinued?(): void;
  /**
   * A blank line: its line end starts at chunk index `lineEnd`; the next line starts at `next` (after a CRLF
   * when both bytes are in this chunk; a CR that ends the chunk may still take the next chunk's LF).
   */
  blank(lineEnd: number, next: number): void;
  /** Any other line end, as `blank` (only when asked for: the decoder and the framer need blank lines alone). */
  line?(lineEnd: number, next: number): void;
}

/**
 * Where an event stream's events end: its blank lines, found on the raw bytes chunk by chunk. The one reading
 * of SSE line ends both the decoder (`sse-decoder.ts`) and the enforce-mode framer (`proxy/sse-framer.ts`)
 * use, so what one calls an event the other does too. Lines end with LF, CR or CRLF (a CRLF may be split
 * across chunks); CR and LF never occur inside a UTF-8 sequence, so no decoding is needed. A line holding only
 * the stream-initial byte order mark is blank, as for a receiver (the SSE parser strips that BOM).
 */
export class SseBlankLines {
  private offset = 0;
  private lineStart = 0;
  /** The previous chunk ended with a CR line end; a LF starting this chunk belongs to it. */
  private afterCR = false;
  private readonly head: number[] = [];

  /** Bytes scanned so far. */
  get bytes(): number {
    return this.offset;
  }

  scan(chunk: Buffer, handler: BlankLineHandler): void {
    if (chunk.length === 0) return;
    const base = this.offset;
    this.offset += chunk.length;
    for (let i = 0; this.head.length < 3 && i < chunk.length; i++) this.head.push(chunk[i]!);
    let pos = 0;
    if (this.afterCR) {
      this.afterCR = false;
      if (chunk[0] === LF) {
        pos = 1;
        this.lineStart = base + 1;
        handler.crlfContinued?.();
      }
    }
    let crAt = chunk.indexOf(CR, pos);
    let lfAt = chunk.indexOf(LF, pos);
    while (pos < chunk.length) {
      if (crAt !== -1 && crAt < pos) crAt = chunk.indexOf(CR, pos);
      if (lfAt !== -1 && lfAt < pos) lfAt = chunk.indexOf(LF, pos);
      const lineEnd = crAt === -1 ? lfAt : lfAt === -1 ? crAt : Math.min(crAt, lfAt);
      if (lineEnd === -1) break;
      let next = lineEnd + 1;
      if (chunk[lineEnd] === CR) {
        if (next === chunk.length) this.afterCR = true;
        else if (chunk[next] === LF) next++;
      }
      const blank = this.isBlankLine(base + lineEnd);
      pos = next;
      this.lineStart = base + next;
      if (blank) handler.blank(lineEnd, next);
      else handler.line?.(lineEnd, next);
    }
  }

  /** A line is blank when nothing precedes its line end, a stream-initial BOM aside. */
  private isBlankLine(lineEndOffset: number): boolean {
    const length = lineEndOffset - this.lineStart;
    if (length === 0) return true;
    return this.lineStart === 0 && length === 3 && BOM.every((byte, i) => this.head[i] === byte);
  }
}
