import { isUtf8 } from "node:buffer";
import { maxDepth, parseJsonText } from "../body/json-body.js";
import { DEFAULT_MAX_JSON_DEPTH, MAX_JSON_VALUES } from "../body/limits.js";
import { moreJsonValuesThan } from "../body/json-structure.js";
import { duplicateMemberDoubt } from "../body/duplicate-members.js";
import { pythonJsonText } from "../body/json-text.js";
import { valueSequence } from "../body/leading-value.js";
import { splitBatch } from "../mcp/jsonrpc.js";
import { ANY_BREAK, escapeStringBreaks, JSON_STRING_BREAK, READER_FAMILIES } from "./reader-families.js";

/**
 * How one stdio line reads, to every family of reader (see reader-families.ts). `values` is the proxy's
 * reading (LF ends a line; bad UTF-8 replaced), what is recorded; `hidden` what other readers read that it
 * does not hold, recorded as messages of their own.
 */
export interface LineReading {
  blank: boolean;
  /** The JSON values read (one, unless the line holds several one after another); empty when none parses. */
  values: unknown[];
  /** Why `values` is not a clean reading (not UTF-8, a member twice, not JSON): never forwarded in enforce mode. */
  problem?: string;
  /**
   * Messages other readers (or other repairs of bad bytes) read that `values` lacks, each with why. One with the
   * id and method of a message of `values` is another reading of it (`alternates`, by its index among the
   * messages of `values`, batches spread); any other is a message of its own.
   */
  hidden: { message: unknown; reason: string }[];
  alternates: Map<number, unknown[]>;
  /** Why some reader reads the line otherwise than `values`: enforce mode refuses it (unless `canonical`). */
  doubt?: string;
  /** Why some reader reads a message the record would not show: what monitor mode records as the doubt. */
  recordDoubt?: string;
  /** The line with NEL, U+2028 and U+2029 escaped, when that makes every reader read `values`: enforce mode forwards it. */
  canonical?: () => Buffer;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const CR = 0x0d;
const NEWLINE = Buffer.from("\n");
/** Breaks that JSON allows between tokens (CR) or not at all: a line with one is never made canonical. */
const OTHER_BREAKS = /[\r\0\x0b\x0c\x1c\x1d\x1e]/;
const NOT_UTF8 = "line is not valid UTF-8 (read with replacement characters)";

/** What one reader makes of one of its lines. */
interface TextReading {
  values: unknown[];
  /** The values are not JSON.parse's reading of the text (NaN, several values): why. */
  doubt?: string;
  error?: string;
}

/** Bad bytes dropped rather than replaced: the line read whole, as the proxy reads it otherwise. */
const DROPPING = { who: "readers that drop bytes that are not UTF-8", lines: (text: string, _limit: number) => [text] };

export function readLine(content: Buffer, depthLimit = DEFAULT_MAX_JSON_DEPTH): LineReading {
  let body = content;
  if (body.length > 0 && body[body.length - 1] === CR) body = body.subarray(0, body.length - 1);
  // A byte order mark is not part of the JSON text (as TextDecoder would drop it).
  if (body.subarray(0, 3).equals(BOM)) body = body.subarray(3);
  const utf8 = isUtf8(body);
  const text = body.toString("utf8");
  // Replacing bad bytes and dropping them are both common repairs: a name split by one is whole once dropped.
  const texts = utf8 ? [text] : [text, text.replaceAll("\ufffd", "")];
  const none = { values: [], hidden: [], alternates: new Map<number, unknown[]>() };
  // Most lines hold no character any family ends a line at, and no bad byte: every family reads them alike.
  const alike = utf8 && !ANY_BREAK.test(text);
  if (text.trim() === "" && (alike || texts.every((t) => READER_FAMILIES.every((f) => f.lines(t, MAX_PIECES).every((l) => l.trim() === ""))))) return { blank: true, ...none };
  // Counted on the whole line, as one body is: each of its values (or each piece a reader splits it into) may
  // be under the bound while together they cost the loop seconds to parse.
  if (moreJsonValuesThan(text, MAX_JSON_VALUES)) return { blank: false, ...none, problem: `line holds more than ${MAX_JSON_VALUES} JSON values (member names included); not parsed, not inspected` };
  const own = readText(text, depthLimit);
  const problems = [utf8 ? undefined : NOT_UTF8, own.error, own.values.length === 1 && own.doubt === undefined ? duplicateMemberDoubt(text) : undefined];
  const problem = problems.filter((p) => p !== undefined && p !== null).join("; ") || undefined;
  const others = alike ? { hidden: [], alternates: new Map<number, unknown[]>(), doubts: [], cut: false } : otherReadings(texts, own.values, depthLimit);
  const ids = unsafeIds([...own.values, ...others.hidden.map((h) => h.message)]);
  const doubts = [own.doubt, ...others.doubts, ids].filter((d) => d !== undefined);
  const reading: LineReading = { blank: false, values: own.values, hidden: others.hidden, alternates: others.alternates, ...(problem !== undefined ? { problem } : {}) };
  if (doubts.length === 0) return reading;
  reading.doubt = doubts.join("; ");
  // Monitor mode records a doubt when a reader reads what the record would not show: a message of its own or
  // another reading of one, a reading JSON.parse does not share, an id it rounds. A reader that only fails to
  // read a message (a NEL inside a JSON string cuts it in two pieces that do not parse) adds nothing to judge.
  if (others.hidden.length > 0 || others.alternates.size > 0 || others.cut || own.doubt !== undefined || ids !== undefined) reading.recordDoubt = reading.doubt;
  // A clean line of one value whose only breaks are NEL, U+2028 and U+2029 holds them inside strings (JSON
  // allows them nowhere else): escaped, it is the same JSON to every reader, and no family splits it.
  // (A piece cut out of strings that still parses as a message of its own keeps the line refused.)
  const clean = problem === undefined && own.doubt === undefined && ids === undefined && !others.cut && others.hidden.length === 0 && others.alternates.size === 0;
  if (clean && own.values.length === 1 && !OTHER_BREAKS.test(text) && JSON_STRING_BREAK.test(text)) {
    reading.canonical = () => Buffer.concat([escapeStringBreaks(body), NEWLINE]);
  }
  return reading;
}

/**
 * Each family's reading of each text, against the proxy's values: the messages they read besides, and where
 * they differ. A family that reads the text as one line reads it as the proxy does and is not read again.
 */
function otherReadings(texts: string[], own: unknown[], depthLimit: number): Pick<LineReading, "hidden" | "alternates"> & { doubts: string[]; cut: boolean } {
  const hidden: LineReading["hidden"] = [];
  const alternates = new Map<number, unknown[]>();
  const doubts = new Set<string>();
  let mine: { messages: unknown[]; keys: string[]; heads: string[] } | null = null;
  // Sets, not list scans: a line of many small values (`{}` between CRs) must not cost its square.
  let known: Set<string> | null = null;
  let cut = false;
  let heads: Map<string, number> | null = null;
  for (const [t, text] of texts.entries()) {
    for (const family of [DROPPING, ...READER_FAMILIES]) {
      const lines = family.lines(text, MAX_PIECES + 1);
      if (lines.length === 1 && lines[0] === text && (t === 0 || family !== DROPPING)) continue;
      mine ??= messagesOf(own);
      known ??= new Set(mine.keys);
      heads ??= new Map([...mine.heads.entries()].reverse().map(([i, h]) => [h, i]));
      const read = readLines(lines.slice(0, MAX_PIECES), depthLimit);
      if (read.cut || lines.length > MAX_PIECES) {
        cut = true;
        doubts.add(`${family.who} read more than ${MAX_READ} lines or values in this line: the rest were not judged`);
      }
      const theirs = messagesOf(read.values);
      if (theirs.keys.length === mine.keys.length && theirs.keys.every((k, i) => k === mine!.keys[i])) continue;
      const why = family === DROPPING ? `${family.who} read it otherwise` : `${family.who} read ${lines.length > MAX_PIECES ? `more than ${MAX_PIECES}` : lines.length} lines in this line`;
      doubts.add(why);
      for (const [i, message] of theirs.messages.entries()) {
        if (known.has(theirs.keys[i]!)) continue;
        known.add(theirs.keys[i]!);
        const same = theirs.heads[i] === "" ? undefined : heads.get(theirs.heads[i]!);
        if (same === undefined) hidden.push({ message, reason: why });
        else if (alternates.has(same)) alternates.get(same)!.push(message);
        else alternates.set(same, [message]);
      }
    }
  }
  return { hidden, alternates, doubts: [...doubts], cut };
}

/**
 * Each line's values, up to MAX_READ lines and values in all: an 8 MiB line of `{}` or `a` between CRs would
 * otherwise cost a million parses (and records). What lies past the budget is not judged: the line is
 * refused in enforce mode, flagged in monitor mode.
 */
function readLines(lines: string[], depthLimit: number): { values: unknown[]; cut: boolean } {
  const values: unknown[] = [];
  let spent = 0;
  for (const line of lines) {
    if (line.trim() === "") continue;
    // A byte order mark at the start of a piece is skipped as at the start of a line (Gson's JsonReader does).
    const read = readText(line.startsWith("\ufeff") ? line.slice(1) : line, depthLimit).values;
    spent += 1 + read.length;
    if (spent > MAX_READ) return { values, cut: true };
    values.push(...read);
  }
  return { values, cut: false };
}

const MAX_READ = 1000;
/** Lines (blank ones too) a family's reading is cut into at most: the split itself stays bounded. */
const MAX_PIECES = 100_000;

/** The messages of some values (batches spread), each with its key and its id and method (what ties two readings of one message). */
function messagesOf(values: unknown[]): { messages: unknown[]; keys: string[]; heads: string[] } {
  const messages = values.flatMap((v) => splitBatch(v).messages);
  // Without an id or a method nothing ties two readings together: each is a message of its own.
  const head = (m: unknown): string => {
    const { id, method } = (typeof m === "object" && m !== null ? m : {}) as { id?: unknown; method?: unknown };
    return id === undefined && method === undefined ? "" : JSON.stringify([id ?? null, method ?? null]);
  };
  return { messages, keys: messages.map(keyOf), heads: messages.map(head) };
}

/** One reader's line: JSON.parse's reading; else Python's json (NaN, Infinity); else values one after another. */
function readText(text: string, depthLimit: number): TextReading {
  if (text.trim() === "") return { values: [] };
  const strict = parseJsonText(text);
  const shallow = (values: unknown[]): unknown[] => values.filter((v) => maxDepth(v, depthLimit) <= depthLimit);
  if (strict.ok) {
    const values = shallow([strict.value]);
    return values.length > 0 ? { values } : { values, error: `JSON nests deeper than ${depthLimit} levels` };
  }
  const python = pythonJsonText(text);
  const asPython = python === null ? null : parseJsonText(python);
  if (asPython?.ok) return { values: shallow([asPython.value]), doubt: "the line holds NaN or Infinity, which Python's json reads as numbers (JSON.parse refuses the line)" };
  const sequence = shallow(valueSequence(text, (piece) => parseJsonText(pythonJsonText(piece) ?? piece)));
  if (sequence.length > 0) return { values: sequence, doubt: "the line goes on after its first JSON value (readers that decode a stream of values, such as Go's json.Decoder, read on)" };
  return { values: [], error: `line is not JSON: ${strict.error}` };
}

/** Ids JavaScript readers round (past 2^53, past a double's range, fractions): such a reader may take the message for another one's answer. */
function unsafeIds(values: unknown[]): string | undefined {
  for (const value of values) {
    for (const m of splitBatch(value).messages) {
      const id = typeof m === "object" && m !== null ? (m as { id?: unknown }).id : undefined;
      // Infinity too: `1e400` and `2e400` are one id to JavaScript.
      if (typeof id === "number" && !Number.isSafeInteger(id)) {
        return `id ${id} is past 2^53 or not an integer: JavaScript readers round it (to the id of another message, maybe), others read the digits as written`;
      }
    }
  }
  return undefined;
}

/** Two readings of a value are the same message when they serialise alike. */
function keyOf(value: unknown): string {
  return JSON.stringify(value) ?? "undefined";
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
