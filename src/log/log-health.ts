export type OnLogError = "pass" | "block";

/**
 * Whether records are being written. `pass` (the default) keeps traffic flowing and says loudly on stderr
 * that records are being lost; `block` makes the proxy refuse traffic it cannot record until a write
 * succeeds again.
 */
export class LogHealth {
  failing: Error | null = null;
  dropped = 0;
  /** When each kind of warning was last said: each is said at most every 10 s. */
  private readonly lastSaid = new Map<"failed" | "dropped" | "rotation", number>();

  constructor(
    readonly mode: OnLogError,
    readonly target: string,
    private readonly warn: (line: string) => void = (line) => process.stderr.write(line),
    private readonly now: () => number = Date.now,
  ) {}

  /** True when the proxy should refuse new traffic. */
  get blocking(): boolean {
    return this.mode === "block" && this.failing !== null;
  }

  failed(err: Error): void {
    // A new failure (after records were written again) is always said.
    if (this.failing === null) this.lastSaid.delete("failed");
    this.failing = err;
    const what = this.mode === "block" ? "new traffic is refused until records can be written again" : "traffic passes UNRECORDED (--on-log-error block would refuse it)";
    this.sayEvery10s("failed", () => `mcp-wiretap: cannot write log records to ${this.target}: ${codeOf(err)}; ${what}${this.dropped ? ` (${this.dropped} records dropped so far)` : ""}\n`);
  }

  /** A record could not even be buffered (the destination fell too far behind): said loudly, at most every 10 s. */
  droppedRecord(): void {
    this.dropped++;
    this.sayEvery10s("dropped", () => `mcp-wiretap: log records are being DROPPED: ${this.target} cannot keep up (${this.dropped} so far)\n`);
  }

  /** The log could not be rotated; records are still written. Said at most every 10 s. */
  rotationFailed(err: Error): void {
    this.sayEvery10s("rotation", () => `mcp-wiretap: cannot rotate ${this.target}: ${codeOf(err)}; records are still written, rotation is tried again later\n`);
  }

  /** Records a failed write took with it (the failure itself is reported by `failed`). */
  lostRecords(count: number): void {
    this.dropped += count;
  }

  recovered(): void {
    if (this.failing === null) return;
    this.failing = null;
    this.warn(`mcp-wiretap: log records are written to ${this.target} again${this.dropped ? ` (${this.dropped} were dropped)` : ""}\n`);
  }

  private sayEvery10s(kind: "failed" | "dropped" | "rotation", line: () => string): void {
    const last = this.lastSaid.get(kind);
    if (last !== undefined && this.now() - last <= 10_000) return;
    this.lastSaid.set(kind, this.now());
    this.warn(line());
  }
}

function codeOf(err: Error): string {
  return (err as NodeJS.ErrnoException).code ?? err.message;
}
