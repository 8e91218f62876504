import { scanAll, type DetectorName, type Finding } from "../detectors/index.js";

export interface SecretMask {
  /** JSON Pointer (RFC 6901) of the string to replace, relative to the value. */
  pointer: string;
  /** What was found there, e.g. "aws_access_key_id". */
  what: string;
}

/** Where a value holds secrets, and whether the scan saw all of it. */
export interface SecretScan {
  masks: SecretMask[];
  /** False when the scan stopped at its bounds: what lies past them was not looked at. */
  complete: boolean;
  /** Not scanned at all (the proxy's scan queue was full): no part of it may be written. */
  unscanned?: true;
}

/**
 * The largest preview that is sure to lie within what an incomplete scan covered. The scanner stops after
 * 2,000,000 characters of text, 200,000 strings or 2,000,000 nodes, in document order: each of these takes at
 * least 400,000 characters of JSON text.
 */
export const SCANNED_PREFIX_BYTES = 256 * 1024;

/** The finding of a part the detectors did not scan at all (src/policy/sliced-scan.ts). */
export const NOT_SCANNED = "not_scanned";

const SECRETS: ReadonlySet<DetectorName> = new Set(["secrets"]);

/** The secrets detector's findings under `field` (e.g. "/params") of a message, relative to that field. */
export function scanOfFindings(findings: readonly Pick<Finding, "path" | "type">[], field = ""): SecretScan {
  const masks: SecretMask[] = [];
  let complete = true;
  let unscanned = false;
  for (const f of findings) {
    if (f.path !== field && !f.path.startsWith(`${field}/`)) continue;
    if (f.type === "scan_limit") complete = false;
    else if (f.type === NOT_SCANNED) unscanned = true;
    else masks.push({ pointer: f.path.slice(field.length), what: f.type });
  }
  return unscanned ? { masks, complete: false, unscanned } : { masks, complete };
}

/**
 * Scans a value no policy decision has scanned (an invalid message, a session's clientInfo, serverInfo and
 * capabilities): its secrets are masked in the record whatever the policy's detector settings.
 */
export function scanForSecrets(value: unknown): SecretScan {
  if (typeof value !== "object" && typeof value !== "string") return { masks: [], complete: true };
  if (value === null) return { masks: [], complete: true };
  return scanOfFindings(scanAll(value, SECRETS));
}
