import { rememberingClean } from "../detectors/clean-texts.js";
import { secretsScanner } from "../detectors/secrets.js";
import { redactedAs } from "./redact/label.js";

/** Shorter than any credential shape the detector knows (a Slack token is 15 characters at least). */
const MIN_SHAPED_CHARS = 12;

/** `value` as a record carries it: `[redacted: <type>, …]` (every kind found) when the detector recognises a secret by its shape (or its member's name). */
export function maskShapedText(value: string, memberName?: string): string {
  return masked(secretsScanner.scanText(value, { kind: "value", memberName }), value);
}

/** Header values, addresses and error texts repeat from one record to the next: those found clean are not scanned again. */
const remembering = rememberingClean(secretsScanner, MIN_SHAPED_CHARS);

/** maskShapedText, skipping the scan of texts already found clean (the scan is deterministic). */
export function maskShapedTextOnce(value: string, memberName?: string): string {
  if (value.length < MIN_SHAPED_CHARS) return value;
  return masked(remembering.scanText(value, { kind: "value", memberName }), value);
}

function masked(findings: readonly { type: string }[], value: string): string {
  return findings.length > 0 ? redactedAs(findings.map((f) => f.type)) : value;
}
