/**
 * The record lines the UI serves: what the page loads first, and the cursor each live feed reads from.
 * Bounded by line count and bytes; past either bound the oldest lines go, and `dropped` says how many.
 */
export const DEFAULT_MAX_LINES = 500_000;
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

export class RecordHistory {
  private lines: string[] = [];
  private head = 0;
  private bytes = 0;
  /** Lines dropped from the front so far: line n of the history has absolute index dropped + n. */
  dropped = 0;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly maxLines = DEFAULT_MAX_LINES,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {}

  append(line: string): void {
    const text = line.endsWith("\n") ? line.slice(0, -1) : line;
    // The page parses each line as JSON; anything else (a partial line, a banner) is not a record.
    if (text === "" || text.charCodeAt(0) !== 0x7b) return;
    this.lines.push(text);
    this.bytes += text.length;
    while (this.lines.length - this.head > this.maxLines || (this.bytes > this.maxBytes && this.lines.length - this.head > 1)) {
      this.bytes -= (this.lines[this.head] as string).length;
      this.lines[this.head] = "";
      this.head++;
      this.dropped++;
    }
    if (this.head > 65_536 && this.head * 2 > this.lines.length) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
    for (const l of this.listeners) l();
  }

  /** Absolute index of the next line to be appended. */
  get end(): number {
    return this.dropped + this.lines.length - this.head;
  }

  get start(): number {
    return this.dropped;
  }

  /** Lines from absolute index `from` (clamped to what is still held), at most `max`. */
  slice(from: number, max = Number.POSITIVE_INFINITY): { from: number; lines: string[] } {
    const start = Math.max(from, this.dropped);
    const i = this.head + (start - this.dropped);
    const lines = this.lines.slice(i, Math.min(this.lines.length, i + max));
    return { from: start, lines };
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
