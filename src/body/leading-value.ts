import { parseJsonText, type JsonParse } from "./json-body.js";
import { closingQuote } from "./json-text.js";

/**
 * The object or array a text starts with, when more follows it (`{…}{…}`, `{…} junk`, NDJSON). JSON.parse
 * refuses such a text, but many parsers read the first value and ignore the rest (Go's json.Decoder,
 * Jackson by default, streaming readers): that value is how such a receiver reads the body. Hand-written
 * because no parser here reports where its first value ends. Null when the text is not of that shape.
 */
export function leadingValue(text: string): { parsed: Extract<JsonParse, { ok: true }>; doubt: string } | null {
  let start = 0;
  while (start < text.length && /\s/.test(text[start]!)) start++;
  const end = valueEnd(text, start);
  if (end === -1 || text.slice(end).trim() === "") return null;
  const parsed = parseJsonText(text.slice(start, end));
  return parsed.ok ? { parsed, doubt: "the body goes on after its first JSON value (some parsers read only that value)" } : null;
}

/**
 * The values a text holds one after another (`{…}{…}`, `{…}\r{…}`, `1 {…}`), as a reader that decodes a
 * stream of values reads them (Go's json.Decoder, Jackson's MappingIterator), up to the first that does not
 * parse. Such a reader also reads a scalar (`1`, `"x"`) and goes on to the call behind it: scalars are
 * passed over, not returned.
 * `parse` reads one value's text (JSON.parse, or a more lenient reader).
 */
export function valueSequence(text: string, parse: (text: string) => JsonParse = parseJsonText): unknown[] {
  const values: unknown[] = [];
  for (let start = skipSpace(text, 0), read = 0; start < text.length && read < MAX_VALUES; start = skipSpace(text, start), read++) {
    const opens = text.charCodeAt(start) === 0x7b /* { */ || text.charCodeAt(start) === 0x5b; /* [ */
    const end = opens ? valueEnd(text, start) : scalarEnd(text, start);
    if (end === -1) break;
    const parsed = parse(text.slice(start, end));
    if (!parsed.ok) break;
    // A scalar is read and passed over (it is no message): what matters is the call a reader reaches behind it.
    if (opens) values.push(parsed.value);
    start = end;
  }
  return values;
}

/** A line of a few megabytes could hold a hundred thousand `{}`: a reading is bounded. */
const MAX_VALUES = 1000;

/** JSON whitespace (what a stream decoder skips between values). */
function skipSpace(text: string, at: number): number {
  while (at < text.length && /[ \t\r\n]/.test(text[at]!)) at++;
  return at;
}

/** What ends a number or a literal: JSON whitespace and punctuation. */
const SCALAR_END = /[ \t\r\n{}[\],:"]/g;

/** Where the string, number or literal (`true`, `NaN`) that starts at `start` ends, or -1 when none does. */
function scalarEnd(text: string, start: number): number {
  if (text.charCodeAt(start) === 0x22 /* " */) {
    const close = closingQuote(text, start);
    return close < text.length ? close + 1 : -1;
  }
  SCALAR_END.lastIndex = start;
  const end = SCALAR_END.exec(text)?.index ?? text.length;
  return end === start ? -1 : end;
}

/** Where the object or array that opens at `start` ends (just past it), or -1 when none opens or it never closes. */
function valueEnd(text: string, start: number): number {
  const open = text.charCodeAt(start);
  if (open !== 0x7b /* { */ && open !== 0x5b /* [ */) return -1;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = closingQuote(text, i);
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
