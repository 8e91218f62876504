import { isUtf8 } from "node:buffer";
import { duplicateDoubt } from "../body/duplicate-members.js";
import { DEFAULT_MAX_JSON_DEPTH, maxDepth, parseJsonText } from "../body/index.js";

/**
 * How one stdio line reads. `value` is the lenient reading (what a peer that replaces bad UTF-8 would
 * parse); `problem` says why it is not a clean one. A line with a problem is never forwarded in enforce mode.
 */
export interface LineReading {
  blank: boolean;
  value?: unknown;
  problem?: string;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const CR = 0x0d;

export function readLine(content: Buffer, depthLimit = DEFAULT_MAX_JSON_DEPTH): LineReading {
  let body = content;
  if (body.length > 0 && body[body.length - 1] === CR) body = body.subarray(0, body.length - 1);
  // A byte order mark is not part of the JSON text (as TextDecoder would drop it).
  if (body.subarray(0, 3).equals(BOM)) body = body.subarray(3);
  const utf8 = isUtf8(body);
  const text = body.toString("utf8");
  if (text.trim() === "") return { blank: true };
  const parsed = parseJsonText(text);
  const badBytes = utf8 ? undefined : "line is not valid UTF-8 (read with replacement characters)";
  if (!parsed.ok) return { blank: false, problem: badBytes ? `${badBytes}; ${parsed.error}` : `line is not JSON: ${parsed.error}` };
  if (maxDepth(parsed.value, depthLimit) > depthLimit) return { blank: false, problem: `JSON nests deeper than ${depthLimit} levels` };
  const twice = duplicateDoubt(text);
  const problem = [badBytes, twice].filter(Boolean).join("; ");
  return problem ? { blank: false, value: parsed.value, problem } : { blank: false, value: parsed.value };
}

/**
 * The id at the head of a message too large to read (`{"jsonrpc":"2.0","id":7,…` as SDKs write it), so
 * that the error sent in its place can reach the request waiting for it. Never used to judge anything.
 */
export function leadingId(head: Buffer): string | number | null {
  const m = /^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")\s*,/.exec(head.subarray(0, 512).toString("latin1"));
  if (!m) return null;
  return m[1]!.startsWith('"') ? m[1]!.slice(1, -1) : Number(m[1]);
}
