import type { Detector, Finding, TextScanner } from "./finding.js";
import { REDACTED_SEGMENT, StringWalk, type WalkedText, type WalkLimits } from "./walk-strings.js";

export interface ScanOptions {
  /** JSON Pointer of `value` inside the message it came from, e.g. "/params/arguments". */
  basePath?: string;
  limits?: Partial<WalkLimits>;
}

/**
 * One walk over the value, every text handed to every scanner. A member name in which any scanner
 * finds something is shown as `<redacted>` in all paths (its own and everything beneath it), so a
 * secret used as a key never reaches a log through a path.
 */
export function scanValue(scanners: readonly TextScanner[], value: unknown, options: ScanOptions = {}): Finding[] {
  const scan = new ValueScan(scanners, value, options);
  while (scan.step());
  return scan.findings;
}

/** A value text this long is handed to its scanners one step each (a step of a long message's scan stays short). */
const LONG_TEXT_CHARS = 16 * 1024;

/**
 * `scanValue` one step at a time (see StringWalk): a step is one value of the walk, or one scanner on a long
 * text. `step()` says whether there is more; once it says no, `findings` holds what `scanValue` returns, in
 * the same order. (A member name is scanned whole in its step: whether it is masked decides the paths below it.)
 */
export class ValueScan {
  readonly findings: Finding[] = [];
  private readonly walk: StringWalk | null;
  /** A long text waiting for its scanners, from the `next`-th on. */
  private pending: { item: WalkedText; next: number } | null = null;
  private ended = false;

  constructor(
    private readonly scanners: readonly TextScanner[],
    value: unknown,
    options: ScanOptions = {},
  ) {
    this.walk = scanners.length === 0 ? null : new StringWalk(value, (item) => this.visit(item), options);
  }

  step(): boolean {
    if (this.pending) {
      const { item, next } = this.pending;
      this.pending = next + 1 < this.scanners.length ? { item, next: next + 1 } : null;
      this.scanWith(this.scanners[next]!, item);
      return true;
    }
    if (!this.walk || this.ended) return false;
    if (this.walk.step() || this.pending) return true;
    this.ended = true;
    const outcome = this.walk.outcome!;
    if (!outcome.complete) {
      for (const scanner of this.scanners) {
        this.findings.push({
          detector: scanner.name,
          type: "scan_limit",
          path: outcome.stoppedAt,
          detail: `stopped at the ${outcome.reason} limit; the rest of the value was not scanned`,
        });
      }
    }
    return false;
  }

  private visit(item: WalkedText): boolean {
    if (item.kind === "value" && item.text.length >= LONG_TEXT_CHARS && this.scanners.length > 1) {
      this.pending = { item, next: 0 };
      return false;
    }
    let flagged = false;
    for (const scanner of this.scanners) flagged = this.scanWith(scanner, item) || flagged;
    return flagged;
  }

  /** The scanner's findings on one text; whether it found anything. */
  private scanWith(scanner: TextScanner, item: WalkedText): boolean {
    let flagged = false;
    for (const found of scanner.scanText(item.text, { kind: item.kind, memberName: item.memberName })) {
      flagged = true;
      const finding: Finding = { detector: scanner.name, type: found.type, path: item.path };
      if (item.kind === "key") finding.path = `${item.parentPath}/${REDACTED_SEGMENT}`;
      const detail = item.kind === "key" ? `${found.detail ?? ""} (in a member name)`.trim() : found.detail;
      if (detail !== undefined) finding.detail = detail;
      this.findings.push(finding);
    }
    return flagged;
  }
}

export function detectorFor(scanner: TextScanner): Detector {
  return {
    name: scanner.name,
    scanner,
    scan: (value, basePath) => scanValue([scanner], value, basePath === undefined ? {} : { basePath }),
  };
}
