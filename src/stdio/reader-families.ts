/**
 * How the families of stdio receivers cut a line (the bytes up to an LF, its LF and a CR before it taken
 * off) into the lines they read. The proxy's own reading is the first family's: LF ends a line, as for the
 * TypeScript SDK (ReadBuffer), Go's bufio.Scanner and Rust's lines(). The others read more lines from it.
 */
export interface ReaderFamily {
  /** Who reads so, and where their lines end: for records and errors. */
  who: string;
  /** The lines this family reads in one LF-ended line (the text itself when it reads it whole), at most `limit`. */
  lines(text: string, limit: number): string[];
}

export const READER_FAMILIES: readonly ReaderFamily[] = [
  {
    who: "readers that end a line at CR as well as LF (the Python SDK's stdin, Java's BufferedReader.readLine, .NET's ReadLine)",
    lines: (text, limit) => text.split("\r", limit),
  },
  {
    who: "readers that split lines as Python's str.splitlines() or Java's Scanner.nextLine() does (also at CR, VT, FF, FS, GS, RS, NEL, U+2028, U+2029)",
    lines: (text, limit) => text.split(/[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/, limit),
  },
  {
    who: "readers that take a line as a C string (it ends at the first NUL)",
    lines: (text) => [text.split("\0", 1)[0]!],
  },
];

/** Any character some family ends a line at: a line without one reads alike to all of them. */
export const ANY_BREAK = /[\r\0\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** Characters that end a line for some family and that JSON allows nowhere but inside strings: NEL, U+2028, U+2029. */
export const JSON_STRING_BREAK = /[\x85\u2028\u2029]/;

const HEX = "0123456789abcdef";

/**
 * UTF-8 bytes with each NEL (C2 85), U+2028 (E2 80 A8) and U+2029 (E2 80 A9) written as a JSON escape. Inside
 * JSON strings that is the same text to every reader, and no reader ends a line there any more. Hand-written on
 * the bytes: a regex replacement on a long text full of them costs seconds and three copies.
 */
export function escapeStringBreaks(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length * 3);
  let n = 0;
  const escape = (code: number): void => {
    n += out.write("\\u", n, "latin1");
    for (const shift of [12, 8, 4, 0]) out[n++] = HEX.charCodeAt((code >> shift) & 0xf);
  };
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0xc2 && bytes[i + 1] === 0x85) {
      escape(0x85);
      i += 1;
    } else if (b === 0xe2 && bytes[i + 1] === 0x80 && (bytes[i + 2] === 0xa8 || bytes[i + 2] === 0xa9)) {
      escape(bytes[i + 2] === 0xa8 ? 0x2028 : 0x2029);
      i += 2;
    } else {
      out[n++] = b;
    }
  }
  return out.subarray(0, n);
}
