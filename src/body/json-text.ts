/** Scanning JSON text without parsing it (shared by the member-name and leading-value checks). */

/** Index of the quote that closes the string opened at `open` (a quote preceded by an odd run of backslashes is escaped). */
export function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at !== -1) {
    let slashes = 0;
    for (let j = at - 1; text.charCodeAt(j) === 0x5c; j--) slashes++;
    if (slashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
  return text.length;
}

const PYTHON_NUMBERS = ["-Infinity", "Infinity", "NaN"];

/**
 * The text as Python's `json` reads it, where that differs from JSON.parse: it takes `NaN`, `Infinity` and
 * `-Infinity` as numbers. Returned with each written `null` (JSON.parse reads the rest alike; the value is
 * then judged, not the number); null when the text has none of them outside strings.
 */
export function pythonJsonText(text: string): string | null {
  if (!/NaN|Infinity/.test(text)) return null;
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = closingQuote(text, i);
      continue;
    }
    if (c !== 0x2d /* - */ && c !== 0x49 /* I */ && c !== 0x4e /* N */) continue;
    const word = PYTHON_NUMBERS.find((w) => text.startsWith(w, i));
    if (word === undefined) continue;
    out += `${text.slice(from, i)}null`;
    i += word.length - 1;
    from = i + 1;
  }
  return from === 0 ? null : out + text.slice(from);
}
