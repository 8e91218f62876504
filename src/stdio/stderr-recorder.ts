import type { Logger } from "../log/logger.js";
import { maskAtPointers, redactText } from "../log/redact.js";
import { secretsScanner } from "../detectors/secrets.js";
import { stderrRecord } from "../records/lifecycle-records.js";
import { LineFramer } from "./line-framer.js";

export interface StderrLimits {
  /** Longest line kept in a record (longer ones are cut, and say so). */
  maxLineBytes: number;
  /** Records per second; lines past it are counted, and the count is written with the next record. */
  linesPerSecond: number;
}

export const DEFAULT_STDERR_LIMITS: StderrLimits = { maxLineBytes: 4096, linesPerSecond: 50 };

/**
 * The server's stderr, one `event: "stderr"` record per line, redacted like payloads. A chatty or hostile
 * server cannot flood the log: lines are cut and rate-limited, and what was left out is counted.
 */
export class StderrRecorder {
  private readonly framer: LineFramer;
  private windowStart = 0;
  private inWindow = 0;
  private suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly fields: { server: string; session: string },
    private readonly limits: StderrLimits = DEFAULT_STDERR_LIMITS,
    private readonly now: () => number = Date.now,
  ) {
    let head: Buffer | null = null;
    this.framer = new LineFramer(limits.maxLineBytes, {
      line: (content) => this.record(content, content.length, false),
      oversizedStart: (bytes) => (head = bytes.subarray(0, limits.maxLineBytes)),
      oversizedData: () => {},
      oversizedEnd: (total) => {
        this.record(head ?? Buffer.alloc(0), total, true);
        head = null;
      },
    });
  }

  data(chunk: Buffer): void {
    this.framer.push(chunk);
  }

  end(): void {
    this.framer.end();
    if (this.suppressed > 0) this.log.warn(stderrRecord(this.fields, { suppressedLines: this.suppressed }));
    this.suppressed = 0;
  }

  private record(content: Buffer, bytes: number, truncated: boolean): void {
    const now = this.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.limits.linesPerSecond) {
      this.suppressed++;
      return;
    }
    this.inWindow++;
    const text = content.toString("utf8").replace(/\r$/, "");
    this.log.info(stderrRecord(this.fields, { line: redactLine(text), bytes, truncated, suppressedLines: this.suppressed }));
    this.suppressed = 0;
  }
}

/**
 * As a payload string is: a line in which the secrets detector finds a secret is replaced whole (the
 * detector gives no position); credentials the text redaction knows (Bearer, JWT, key=value) are hidden.
 */
export function redactLine(line: string): string {
  const found = secretsScanner.scanText(line, { kind: "value", memberName: undefined });
  if (found.length > 0) return maskAtPointers(line, [{ pointer: "", what: found.map((f) => f.type).join(", ") }]) as string;
  return redactText(line);
}
