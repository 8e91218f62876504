/**
 * How the families of stdio receivers cut a line (the bytes up to an LF, its LF and a CR before it taken
 * off) into the lines they read. The proxy's own reading is the first family's: LF ends a line, as for the
 * TypeScript SDK (ReadBuffer), Go's bufio.Scanner and Rust's lines(). The others read more lines from it.
 */
export interface ReaderFamily {
  /** Who reads so, and where their lines end: for records and errors. */
  who: string;
  /** The lines this family reads in one LF-ended line (the text itself when it reads it whole). */
  lines(text: string): string[];
}

export const READER_FAMILIES: readonly ReaderFamily[] = [
  {
    who: "readers that end a line at CR as well as LF (the Python SDK's stdin, Java's BufferedReader.readLine, .NET's ReadLine)",
    lines: (text) => text.split("\r"),
  },
  {
    who: "readers that split lines as Python's str.splitlines() or Java's Scanner.nextLine() does (also at CR, VT, FF, FS, GS, RS, NEL, U+2028, U+2029)",
    lines: (text) => text.split(/[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/),
  },
  {
    who: "readers that take a line as a C string (it ends at the first NUL)",
    lines: (text) => [text.split("\0", 1)[0]!],
  },
];

/** NEL, U+2028 and U+2029: line breaks to some readers, yet legal unescaped inside a JSON string (and nowhere else in JSON). */
const JSON_STRING_BREAKS = /[\x85\u2028\u2029]/g;

/** The text with each NEL, U+2028 and U+2029 written as a JSON escape; null when it has none. */
export function escapedStringBreaks(text: string): string | null {
  JSON_STRING_BREAKS.lastIndex = 0;
  if (!JSON_STRING_BREAKS.test(text)) return null;
  return text.replace(JSON_STRING_BREAKS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
