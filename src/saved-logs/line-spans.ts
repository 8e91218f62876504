import type { FileSource } from "./follow.js";
import { MAX_LINE_CHARS } from "./reader.js";

/** A line of a file and where its bytes are, so that a reader can hold the place instead of the text. */
export interface LineSpan {
  line: string;
  /** Byte offset of the line's first byte in its file. */
  offset: number;
  /** Its length in bytes, without the newline (and a `\r` before it). */
  bytes: number;
  /** The file (and content, counting truncations) it was read from; null when none was said. */
  source: FileSource | null;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Splits a file's bytes into lines as `LineSplitter` does (`\n` ends a line, a `\r` before it is dropped,
 * a line past MAX_LINE_CHARS bytes is handed on in pieces), keeping each line's byte offset. Works on bytes
 * rather than decoded text: a character's UTF-16 length says nothing of its UTF-8 length, nor of the bytes
 * an invalid sequence had. The chunk pushed may be reused by the caller: a partial line is copied.
 */
export class FileSpanSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Offset of the first byte not yet handed on (the partial line's start). */
  private position = 0;
  private source: FileSource | null = null;

  push(chunk: Buffer): LineSpan[] {
    const out: LineSpan[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(NEWLINE, from); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
      const piece = chunk.subarray(from, nl);
      const whole = this.pendingBytes === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.pending = [];
      this.pendingBytes = 0;
      out.push(this.span(whole, true, true));
      from = nl + 1;
    }
    if (from < chunk.length) {
      this.pending.push(Buffer.from(chunk.subarray(from)));
      this.pendingBytes += chunk.length - from;
      if (this.pendingBytes > MAX_LINE_CHARS) out.push(this.span(this.takePending(), false, false));
    }
    return out;
  }

  /** The partial line at the end of the input, if any. */
  flush(): LineSpan[] {
    return this.pendingBytes === 0 ? [] : [this.span(this.takePending(), false, true)];
  }

  private takePending(): Buffer {
    const whole = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return whole;
  }

  reset(source?: FileSource): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.position = 0;
    if (source !== undefined) this.source = source;
  }

  /** `newline`: one follows the line; `complete`: the line is whole (a `\r` at its end is dropped), not a piece of a long one. */
  private span(content: Buffer, newline: boolean, complete: boolean): LineSpan {
    const bytes = complete && content.length > 0 && content[content.length - 1] === CR ? content.length - 1 : content.length;
    const span: LineSpan = { line: content.toString("utf8", 0, bytes), offset: this.position, bytes, source: this.source };
    this.position += content.length + (newline ? 1 : 0);
    return span;
  }
}
