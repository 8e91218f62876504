import type { Detector, DetectorName, Finding, TextScanner } from "./finding.js";
import { rememberingClean } from "./clean-texts.js";
import { hiddenTextScanner } from "./hidden-text.js";
import { piiScanner as piiRules } from "./pii.js";
import { poisoningScanner } from "./poisoning.js";
import { detectorFor, scanValue, type ScanOptions } from "./scan-value.js";
import { secretsScanner as secretRules } from "./secrets.js";

export type { Detector, DetectorName, Finding, TextScanner } from "./finding.js";
export { findHidden, stripHidden, type HiddenSpan, type HiddenType } from "./hidden-text.js";
export { normalizeForMatching } from "./poisoning.js";
export { detectorFor, scanValue, ValueScan, type ScanOptions } from "./scan-value.js";
export { DEFAULT_WALK_LIMITS, REDACTED_SEGMENT, escapePointerSegment, walkStrings, type WalkLimits } from "./walk-strings.js";

// Every message is scanned: the two scanners that run on all of it skip texts they found clean before.
// (Below 12 characters the secrets scanner finds nothing, below 6 the PII scanner: such texts are not kept.)
const secretsScanner = rememberingClean(secretRules, 12);
const piiScanner = rememberingClean(piiRules, 6);

const scanners: Readonly<Record<DetectorName, TextScanner>> = {
  secrets: secretsScanner,
  pii: piiScanner,
  hiddenText: hiddenTextScanner,
  poisoning: poisoningScanner,
};

export const DETECTOR_NAMES: readonly DetectorName[] = ["secrets", "pii", "hiddenText", "poisoning"];

export const secretsDetector: Detector = detectorFor(secretsScanner);
export const piiDetector: Detector = detectorFor(piiScanner);
export const hiddenTextDetector: Detector = detectorFor(hiddenTextScanner);
export const poisoningDetector: Detector = detectorFor(poisoningScanner);

export const detectors: Readonly<Record<DetectorName, Detector>> = {
  secrets: secretsDetector,
  pii: piiDetector,
  hiddenText: hiddenTextDetector,
  poisoning: poisoningDetector,
};

/** Runs the enabled detectors in one walk over the value; findings come in document order. */
export function scanAll(value: unknown, enabled: ReadonlySet<DetectorName>, options: ScanOptions = {}): Finding[] {
  const active = DETECTOR_NAMES.filter((name) => enabled.has(name)).map((name) => scanners[name]);
  return scanValue(active, value, options);
}
