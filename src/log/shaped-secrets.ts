import { secretsScanner } from "../detectors/secrets.js";

/** Shorter than any credential shape the detector knows (a Slack token is 15 characters at least). */
const MIN_SHAPED_CHARS = 12;
/** Clean texts remembered: header values, addresses and error texts repeat from one record to the next. */
const MAX_REMEMBERED = 2048;
/** Longer texts are scanned every time (rarely repeated, and costly to keep). */
const MAX_REMEMBERED_CHARS = 256;

/** `value` as a record carries it: `[redacted: <type>]` when the detector recognises a secret by its shape (or its member's name). */
export function maskShapedText(value: string, memberName?: string): string {
  if (value.length < MIN_SHAPED_CHARS) return value;
  const found = secretsScanner.scanText(value, { kind: "value", memberName })[0];
  return found ? `[redacted: ${found.type}]` : value;
}

/** Texts the detector found nothing in, by the name of their member. Secrets are never kept here. */
const clean = new Map<string | undefined, Set<string>>();
let remembered = 0;

/** maskShapedText, skipping the scan of texts already found clean (the scan is deterministic). */
export function maskShapedTextOnce(value: string, memberName?: string): string {
  if (value.length < MIN_SHAPED_CHARS || value.length > MAX_REMEMBERED_CHARS) return maskShapedText(value, memberName);
  if (clean.get(memberName)?.has(value)) return value;
  const masked = maskShapedText(value, memberName);
  if (masked !== value) return masked;
  if (remembered >= MAX_REMEMBERED) {
    clean.clear();
    remembered = 0;
  }
  let texts = clean.get(memberName);
  if (!texts) clean.set(memberName, (texts = new Set()));
  texts.add(value);
  remembered++;
  return value;
}
