export type DetectorName = "secrets" | "pii" | "hiddenText" | "poisoning";

export interface Finding {
  detector: DetectorName;
  /** What was found, e.g. "aws_access_key_id", "card_number", "tag_characters", "conceal_from_user", or "scan_limit". */
  type: string;
  /** JSON Pointer (RFC 6901) into the scanned value. */
  path: string;
  /** Safe to log: never a secret or PII value itself, at most a redacted hint. */
  detail?: string;
}

export interface Detector {
  name: DetectorName;
  scan(value: unknown, basePath?: string): Finding[];
  /** The scanner `scan` runs, so that a caller can run several in one walk (`scanValue`). */
  scanner: TextScanner;
}

/** Where a scanned text sits in the JSON value. */
export interface TextContext {
  /** "key" is an object member name; "number" an integer value, given as its decimal text. */
  kind: "value" | "key" | "number";
  /** Name of the member holding this value (undefined for array items, the root and keys). */
  memberName: string | undefined;
}

/** A finding before the runner adds the detector name and the path. */
export interface TextFinding {
  type: string;
  detail?: string;
}

/** The per-text half of a detector; the runner walks the JSON and supplies paths. */
export interface TextScanner {
  name: DetectorName;
  scanText(text: string, context: TextContext): TextFinding[];
}
