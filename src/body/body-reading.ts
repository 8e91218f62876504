import { isUtf8 } from "node:buffer";
import { createContentDecoder, parseContentEncoding } from "./content-decoding.js";
import { duplicateMemberDoubt } from "./duplicate-members.js";
import { leadingValue } from "./leading-value.js";
import { maxDepth, parseJsonText } from "./json-body.js";
import type { BodyProblem } from "./problem.js";

/**
 * Every way a receiver may plausibly read a JSON body, and why they may differ. Peers are lenient: they
 * ignore a content coding they do not expect, replace (or drop) bytes that are not UTF-8, and some honour
 * a `charset` parameter (raw-body with iconv-lite does). The proxy judges each reading; when there is more
 * than one way to read the body (`ambiguity`), enforce mode refuses it.
 */
export type JsonReading =
  /** `bytes`: the size of the body `value` was read from (decoded, when its coding was undone). */
  | { ok: true; value: unknown; bytes: number; alternates: unknown[]; ambiguity: string | null }
  | { ok: false; problem: BodyProblem; ambiguity: string | null };

export interface JsonReadingOptions {
  contentType: string | readonly string[] | undefined;
  contentEncoding: string | readonly string[] | undefined;
  /** Largest decoded body; past it nothing is parsed. */
  maxBytes: number;
  maxJsonDepth: number;
  /** The body with its coding undone elsewhere (decoded once for every reader of it), if it was. */
  decoded?: Promise<DecodedBytes>;
}

/** A body's decoded bytes (up to a limit), and why decoding stopped short, if it did. */
export interface DecodedBytes {
  bytes: Buffer;
  problem: BodyProblem | null;
}

/** Ordinary JSON compresses tens to one; decoding that keeps expanding 1000:1 past 64 MiB is a bomb. */
export const BOMB_RATIO = { ratio: 1000, afterBytes: 64 * 1024 * 1024 };

/**
 * Reads a whole body (as received) every plausible way. Synchronous unless a content coding has to be undone
 * (zlib works asynchronously): a request read at once is recorded before any answer to it.
 */
export function readJsonBody(raw: Buffer, opts: JsonReadingOptions): JsonReading | Promise<JsonReading> {
  const doubts: string[] = [];
  const parsed = parseContentEncoding(opts.contentEncoding);
  if (parsed.ok && parsed.codings.length === 0) return readTexts({ candidates: [raw], failure: null }, opts, doubts);
  return undoCodings(raw, opts, doubts).then((undone) => readTexts(undone, opts, doubts));
}

function readTexts(undone: Undone, opts: JsonReadingOptions, doubts: string[]): JsonReading {
  if ("problem" in undone) return { ok: false, problem: undone.problem, ambiguity: joined(doubts) };
  const sizes = new Map<string, number>();
  for (const bytes of undone.candidates) {
    for (const text of textReadings(bytes, charsetsOf(opts.contentType), doubts)) if (!sizes.has(text)) sizes.set(text, bytes.length);
  }
  const values: unknown[] = [];
  let bytes = 0;
  // When the coding broke and nothing reads as JSON, that is the problem to report.
  let problem: BodyProblem | null = undone.failure;
  for (const [text, size] of sizes) {
    let parsed = parseJsonText(text);
    const leading = parsed.ok || parsed.code === "json_too_many_values" ? null : leadingValue(text);
    if (leading) {
      parsed = leading.parsed;
      doubts.push(leading.doubt);
    }
    if (!parsed.ok) {
      problem ??= { code: parsed.code, message: parsed.error };
      continue;
    }
    if (maxDepth(parsed.value, opts.maxJsonDepth) > opts.maxJsonDepth) {
      problem = { code: "json_too_deep", message: `JSON body nests deeper than ${opts.maxJsonDepth} levels` };
      continue;
    }
    // JSON.parse keeps the last of two same-named members; other parsers keep the first or refuse.
    const twice = duplicateMemberDoubt(text);
    if (twice !== null) doubts.push(twice);
    if (values.length === 0) bytes = size;
    values.push(parsed.value);
  }
  const ambiguity = joined(doubts);
  if (values.length === 0) return { ok: false, problem: problem ?? { code: "empty_body", message: "empty body: no JSON to parse" }, ambiguity };
  return { ok: true, value: values[0], bytes, alternates: values.slice(1), ambiguity };
}

function joined(doubts: string[]): string | null {
  return doubts.length > 0 ? [...new Set(doubts)].join("; ") : null;
}

type Undone = { candidates: Buffer[]; failure: BodyProblem | null } | { problem: BodyProblem };

/** The byte sequences a receiver may read: decoded as labelled and, when that fails, as sent. */
async function undoCodings(raw: Buffer, opts: JsonReadingOptions, doubts: string[]): Promise<Undone> {
  const label = typeof opts.contentEncoding === "string" ? opts.contentEncoding : (opts.contentEncoding ?? []).join(", ");
  const parsed = parseContentEncoding(opts.contentEncoding);
  if (!parsed.ok) {
    doubts.push(`content-encoding "${label}" is not one the proxy can decode; read as sent`);
    return { candidates: [raw], failure: null };
  }
  if (parsed.codings.length === 0) return { candidates: [raw], failure: null };
  const undone = await (opts.decoded ?? decode(raw, opts));
  const decoded = undone.bytes;
  const failed = undone.problem;
  if (failed?.code === "decode_limit") {
    doubts.push(`the decoded body is larger than the inspection limit of ${opts.maxBytes} bytes`);
    return { problem: { code: "body_truncated", message: `JSON body is larger than the inspection limit of ${opts.maxBytes} bytes; not parsed (${failed.message})` } };
  }
  if (failed) {
    doubts.push(`content-encoding "${label}" does not decode (${failed.message}); read as sent`);
    return { candidates: decoded.length > 0 ? [raw, decoded] : [raw], failure: failed };
  }
  // A body that is JSON as sent as well as once decoded has two readings.
  if (parseJsonText(raw.toString("utf8")).ok) {
    doubts.push(`the body is JSON both as sent and decoded as "${label}"`);
    return { candidates: [decoded, raw], failure: null };
  }
  return { candidates: [decoded], failure: null };
}

async function decode(raw: Buffer, opts: JsonReadingOptions): Promise<DecodedBytes> {
  const out: Buffer[] = [];
  let problem: BodyProblem | null = null;
  const created = createContentDecoder(opts.contentEncoding, {
    maxBytes: opts.maxBytes,
    maxRatio: BOMB_RATIO,
    onData: (chunk) => out.push(chunk),
    onProblem: (p) => (problem ??= p),
  });
  // The coding parsed above: the decoder is always made.
  if (!created.ok) return { bytes: Buffer.alloc(0), problem: created.problem };
  created.decoder.data(raw);
  created.decoder.end();
  await created.decoder.done;
  return { bytes: Buffer.concat(out), problem };
}

/**
 * The `charset` parameters of a content type, lower case, unquoted, in order (usually none or one; parsers
 * differ on which of two wins, so every one is a reading).
 */
export function charsetsOf(contentType: string | readonly string[] | undefined): string[] {
  const value = typeof contentType === "string" ? contentType : contentType?.[0];
  // Most content types name no charset: no match list to build (the same letters, the same `i` flag).
  if (value === undefined || !/charset/i.test(value)) return [];
  // Spaces as Python's str.strip() takes them (email.message, so httpx): NEL and FS to US too.
  const plain = [...value.matchAll(/;[\s\x85\x1c-\x1f]*charset[\s\x85\x1c-\x1f]*=[\s\x85\x1c-\x1f]*("?)([^";\s\x85\x1c-\x1f]*)\1/gi)].map((m) => m[2]!.toLowerCase());
  const extended = rfc2231Charset(value);
  return extended !== null && !plain.includes(extended) ? [...plain, extended] : plain;
}

/**
 * A charset named the RFC 2231 way, as Python's email.message reads it (httpx takes a body's charset from
 * there): `charset*=utf-8''utf-16le` (percent-escaped, after the value's own charset and language), and
 * `charset*0=…; charset*1=…` continuations joined in order. Null when there is none.
 */
function rfc2231Charset(value: string): string | null {
  const pieces: { n: number; text: string; encoded: boolean }[] = [];
  for (const m of value.matchAll(/;[\s\x85\x1c-\x1f]*charset\*(?:(\d+)(\*)?)?[\s\x85\x1c-\x1f]*=[\s\x85\x1c-\x1f]*("?)([^";\s\x85\x1c-\x1f]*)\3/gi)) {
    const encoded = m[1] === undefined || m[2] === "*";
    pieces.push({ n: m[1] === undefined ? 0 : Number(m[1]), text: m[4]!, encoded });
  }
  if (pieces.length === 0) return null;
  pieces.sort((a, b) => a.n - b.n);
  let text = pieces.map((p, i) => (i === 0 && p.encoded ? p.text.replace(/^[^']*'[^']*'/, "") : p.text)).join("");
  if (pieces.some((p) => p.encoded)) {
    try {
      text = decodeURIComponent(text);
    } catch {
      // Not percent-escaped after all: as written.
    }
  }
  return text.toLowerCase() || null;
}

const UTF8_LABELS = new Set(["utf-8", "utf8", "unicode-1-1-utf-8"]);

/**
 * Labels that every reader decodes with ASCII bytes read as ASCII: UTF-8, ASCII, the ISO-8859 and Windows
 * single-byte sets. Under any other label (UTF-16, UTF-7, ISO-2022, or a Python codec such as unicode_escape,
 * which httpx honours) the bytes the proxy writes or passes on may read as other text, line breaks included.
 */
const ASCII_KEEPING = /^(?:utf-?8|unicode-1-1-utf-8|us-ascii|ascii|iso[-_ ]?8859[-_ ]?(?:[1-9]|1[0-6])|latin-?[1-9]|l[1-9]|windows-125[0-8]|cp125[0-8]|cp819|ibm819)$/;

export function keepsAscii(charset: string): boolean {
  return ASCII_KEEPING.test(charset);
}

const BOMS: { bytes: number[]; encoding: "utf-32le" | "utf-32be" | "utf-16le" | "utf-16be" }[] = [
  { bytes: [0xff, 0xfe, 0x00, 0x00], encoding: "utf-32le" },
  { bytes: [0x00, 0x00, 0xfe, 0xff], encoding: "utf-32be" },
  { bytes: [0xff, 0xfe], encoding: "utf-16le" },
  { bytes: [0xfe, 0xff], encoding: "utf-16be" },
];

/**
 * The texts `bytes` may be read as: UTF-8 (the lenient reading first: bad bytes replaced, then dropped),
 * the encoding a UTF-16/32 byte order mark announces, and the content type's charset. A UTF-8 byte order
 * mark is dropped, as TextDecoder does (a reader that keeps it fails to parse: no other message is read).
 */
export function textReadings(bytes: Buffer, charsets: readonly string[], doubts: string[]): string[] {
  const texts: string[] = [];
  const utf8 = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  if (isUtf8(utf8)) {
    texts.push(utf8.toString("utf8"));
  } else {
    const replaced = new TextDecoder("utf-8", { ignoreBOM: true }).decode(utf8);
    doubts.push("the body is not valid UTF-8");
    // Replacing and dropping are both common repairs; a name split by a bad byte is whole once it is dropped.
    texts.push(replaced, replaced.replaceAll("\ufffd", ""));
  }
  const bom = BOMS.find((b) => b.bytes.every((byte, i) => bytes[i] === byte));
  if (bom) {
    doubts.push(`the body starts with a ${bom.encoding.toUpperCase()} byte order mark`);
    texts.push(decodeAs(bytes.subarray(bom.bytes.length), bom.encoding));
  }
  for (const charset of charsets) {
    if (UTF8_LABELS.has(charset)) continue;
    let other: string | null = null;
    try {
      other = new TextDecoder(charset).decode(bytes);
    } catch {
      doubts.push(`content-type names charset "${charset}", which the proxy cannot decode`);
    }
    if (other !== null && other !== texts[0]) {
      doubts.push(`content-type names charset "${charset}", which reads the body differently from UTF-8`);
      texts.push(other);
    }
  }
  // JSON text in UTF-16 or UTF-32 without a byte order mark is told by its zero bytes (RFC 4627 §3), as
  // Python's json.loads(bytes) does: a reading when it makes JSON.
  const zeros = bom ? undefined : zeroPattern(bytes);
  if (zeros) {
    const other = decodeAs(bytes, zeros);
    if (!texts.includes(other) && parseJsonText(other).ok) {
      doubts.push(`the body reads as JSON in ${zeros.toUpperCase()} (its zero bytes say so, without a byte order mark)`);
      texts.push(other);
    }
  }
  return texts;
}

/**
 * Why a piece of an event stream may read otherwise under a `charset` its content type names (EventSource
 * reads UTF-8 only, but httpx-sse, say, decodes the stream with the response's charset); null when each
 * charset reads it as UTF-8 does.
 */
export function charsetDoubt(bytes: Buffer, charsets: readonly string[]): string | null {
  for (const charset of charsets) {
    if (UTF8_LABELS.has(charset)) continue;
    let other: string;
    try {
      other = new TextDecoder(charset, { ignoreBOM: true }).decode(bytes);
    } catch {
      return `content-type names charset "${charset}", which the proxy cannot decode`;
    }
    if (other !== bytes.toString("utf8")) return `content-type names charset "${charset}", which reads the stream differently from UTF-8`;
  }
  return null;
}

/** The encoding the first four bytes of JSON text say it is in, by where their zeros are (none: UTF-8). */
function zeroPattern(bytes: Buffer): (typeof BOMS)[number]["encoding"] | undefined {
  if (bytes.length < 4) return undefined;
  if (bytes[0] === 0) return bytes[1] !== 0 ? "utf-16be" : "utf-32be";
  if (bytes[1] === 0) return bytes[2] !== 0 || bytes[3] !== 0 ? "utf-16le" : "utf-32le";
  return undefined;
}

/** TextDecoder knows UTF-16 but not UTF-32: those code units are read here (invalid ones replaced). */
function decodeAs(bytes: Buffer, encoding: (typeof BOMS)[number]["encoding"]): string {
  if (encoding === "utf-16le" || encoding === "utf-16be") return new TextDecoder(encoding).decode(bytes);
  let text = "";
  for (let i = 0; i + 3 < bytes.length; i += 4) {
    const unit = encoding === "utf-32le" ? bytes.readUInt32LE(i) : bytes.readUInt32BE(i);
    text += unit <= 0x10ffff && (unit < 0xd800 || unit > 0xdfff) ? String.fromCodePoint(unit) : "\ufffd";
  }
  return text;
}
