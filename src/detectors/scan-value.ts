import type { Detector, Finding, TextScanner } from "./finding.js";
import { REDACTED_SEGMENT, walkStrings, type WalkLimits } from "./walk-strings.js";

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
  const findings: Finding[] = [];
  if (scanners.length === 0) return findings;
  const outcome = walkStrings(
    value,
    (item) => {
      let flagged = false;
      for (const scanner of scanners) {
        for (const found of scanner.scanText(item.text, { kind: item.kind, memberName: item.memberName })) {
          flagged = true;
          const finding: Finding = { detector: scanner.name, type: found.type, path: item.path };
          if (item.kind === "key") finding.path = `${item.parentPath}/${REDACTED_SEGMENT}`;
          const detail = item.kind === "key" ? `${found.detail ?? ""} (in a member name)`.trim() : found.detail;
          if (detail !== undefined) finding.detail = detail;
          findings.push(finding);
        }
      }
      return flagged;
    },
    options,
  );
  if (!outcome.complete) {
    for (const scanner of scanners) {
      findings.push({
        detector: scanner.name,
        type: "scan_limit",
        path: outcome.stoppedAt,
        detail: `stopped at the ${outcome.reason} limit; the rest of the value was not scanned`,
      });
    }
  }
  return findings;
}

export function detectorFor(scanner: TextScanner): Detector {
  return {
    name: scanner.name,
    scanner,
    scan: (value, basePath) => scanValue([scanner], value, basePath === undefined ? {} : { basePath }),
  };
}
