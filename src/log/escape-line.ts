/**
 * Characters that must never reach a log line or a terminal raw: C0 and C1 controls and DEL (Cc), every
 * format character (Cf: bidi controls U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069; invisible ones such
 * as U+200B–U+200D, U+2060–U+2064, U+FEFF, U+180E, U+00AD; tag characters U+E0000–U+E007F), the line and
 * paragraph separators U+2028/U+2029 (Zl, Zp), and lone surrogates (Cs, matched only when unpaired in
 * `u` mode). A viewer, an editor or a terminal would act on them (move the cursor, reverse the text, end a
 * line for a JavaScript parser) or hide them.
 *
 * The newline is left out: it ends every NDJSON line, and JSON.stringify already escapes any inside a value.
 */
const UNSAFE = /[\0-\x09\x0b-\x1f\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, "gu");
/**
 * Every unsafe character lies outside printable ASCII and the newline: a line with none (nearly every
 * record) is clean without UNSAFE, whose Unicode classes V8 takes some milliseconds to build on first use,
 * paid by the first record of every launch.
 */
const BEYOND_PRINTABLE_ASCII = /[^\n\x20-\x7e]/;

function unitEscapes(match: string): string {
  let out = "";
  for (let i = 0; i < match.length; i++) out += `\\u${match.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/**
 * One serialized JSON record with every unsafe character written as `\uXXXX` (a character beyond U+FFFF as
 * its two surrogate escapes). Such characters can only stand inside JSON strings, where `\uXXXX` means the
 * same character: the line parses back to the same record. Lines without any (nearly all) cost one test, of printable ASCII.
 */
export function escapeLine(line: string): string {
  if (!BEYOND_PRINTABLE_ASCII.test(line)) return line;
  return UNSAFE.test(line) ? line.replace(UNSAFE_ALL, unitEscapes) : line;
}

/** Text for a terminal: unsafe characters shown as `\uXXXX`, a tab as a space, a newline as `\n`. */
export function visibleText(text: string): string {
  if (!UNSAFE.test(text) && !text.includes("\n")) return text;
  return text.replace(/\n/g, "\\n").replace(UNSAFE_ALL, (c) => (c === "\t" ? " " : unitEscapes(c)));
}
