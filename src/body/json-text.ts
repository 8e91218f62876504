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
