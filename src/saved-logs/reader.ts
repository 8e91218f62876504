import { StringDecoder } from "node:string_decoder";

/** A line longer than this (UTF-16 units) is handed on in pieces rather than buffered without bound. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;

/**
 * Splits text arriving in chunks into lines: `\n` ends a line, a `\r` before it is dropped, and UTF-8
 * characters split across chunks are joined (StringDecoder).
 */
export class LineSplitter {
  private decoder = new StringDecoder("utf8");
  private partial = "";

  /**
   * The complete lines in `chunk` (and the text before it). A chunk without a newline is only appended: the
   * partial line is split once, when its newline comes, so a long line costs its length, not its square.
   */
  push(chunk: Buffer | string): string[] {
    const piece = typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    let lines: string[] = [];
    if (piece.includes("\n")) {
      const parts = (this.partial + piece).split("\n");
      this.partial = parts.pop() ?? "";
      lines = parts.map(stripCr);
    } else {
      this.partial += piece;
    }
    if (this.partial.length > MAX_LINE_CHARS) {
      lines.push(this.partial);
      this.partial = "";
    }
    return lines;
  }

  /** What is left at the end of the input: a last line without its newline, if any. */
  flush(): string[] {
    const rest = this.partial + this.decoder.end();
    this.reset();
    return rest === "" ? [] : [stripCr(rest)];
  }

  /** Forgets the partial line (the file it came from was truncated). */
  reset(): void {
    this.partial = "";
    this.decoder = new StringDecoder("utf8");
  }

  get pending(): boolean {
    return this.partial !== "";
  }
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/** Every line of a stream (stdin), until it ends; a last line without a newline included. */
export async function* streamLines(stream: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const splitter = new LineSplitter();
  for await (const chunk of stream) yield* splitter.push(chunk as Buffer | string);
  yield* splitter.flush();
}
