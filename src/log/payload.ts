import { sha256Of } from "../util/canonical-json.js";

export { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_PAYLOAD_MODE, PAYLOAD_MODES, type PayloadMode } from "./payload-modes.js";
import { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_PAYLOAD_MODE, type PayloadMode } from "./payload-modes.js";

export interface TruncatedPayload {
  truncated: true;
  /** UTF-8 size of the whole JSON text. */
  bytes: number;
  /** Hash of the whole JSON text (JSON.stringify, not canonical: the bytes as decoded). */
  sha256: string;
  /** The JSON text cut to at most maxBytes, on a character boundary: usually not valid JSON. */
  preview: string;
}

export interface UnserializablePayload {
  unserializable: true;
  reason: string;
}

export interface PayloadMeasure {
  bytes: number;
  sha256: string;
}

type Serialized = { text: string } | { text: undefined } | UnserializablePayload;

/** JSON.stringify throws RangeError on very deep values and TypeError on cycles and bigints. */
function serialize(value: unknown): Serialized {
  try {
    return { text: JSON.stringify(value) as string | undefined };
  } catch (error) {
    return { unserializable: true, reason: error instanceof Error ? error.message : String(error) };
  }
}

export function shapePayload(
  value: unknown,
  mode: PayloadMode = DEFAULT_PAYLOAD_MODE,
  maxBytes: number = DEFAULT_MAX_PAYLOAD_BYTES,
): unknown {
  if (mode === "full") return value;
  if (mode === "none") return undefined;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`);
  }
  const serialized = serialize(value);
  if ("unserializable" in serialized) return serialized;
  const { text } = serialized;
  if (text === undefined) return undefined;
  // Every UTF-16 unit is at least one UTF-8 byte: a short string needs no byte count.
  if (text.length <= maxBytes / 3) return value;
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= maxBytes) return value;
  const truncated: TruncatedPayload = {
    truncated: true,
    bytes,
    sha256: sha256Of(text),
    preview: utf8Prefix(text, maxBytes),
  };
  return truncated;
}

/** Size and hash of a payload's JSON text, for records that leave the payload out. */
export function measurePayload(value: unknown): PayloadMeasure | UnserializablePayload | undefined {
  const serialized = serialize(value);
  if ("unserializable" in serialized) return serialized;
  if (serialized.text === undefined) return undefined;
  return { bytes: Buffer.byteLength(serialized.text, "utf8"), sha256: sha256Of(serialized.text) };
}

/** Longest prefix of `text` whose UTF-8 encoding fits in maxBytes, never splitting a character. */
export function utf8Prefix(text: string, maxBytes: number): string {
  // maxBytes UTF-16 units encode to at least maxBytes bytes, so the prefix lies within them.
  let head = text.slice(0, maxBytes);
  const last = head.charCodeAt(head.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1); // half of a surrogate pair
  const encoded = Buffer.from(head, "utf8");
  if (encoded.length <= maxBytes) return head;
  let cut = maxBytes;
  // Back off continuation bytes (10xxxxxx) to the first byte of the character that does not fit.
  while (cut > 0 && ((encoded[cut] as number) & 0xc0) === 0x80) cut--;
  return encoded.subarray(0, cut).toString("utf8");
}
