/**
 * Whether a JSON text holds more than `limit` values, member names included, told before it is parsed (parsing
 * is one step, and so are the walks after it, so a text with too many values is refused before any of them).
 * Counts the commas, colons and opening brackets outside strings: a member's name and value are parted by a
 * colon, each member or element after the first of its object or array follows a comma, each object or array
 * opens with its bracket (never more than the text's values). The brackets count because nesting alone holds
 * no separator: 4,000,000 nested arrays in 8 MB took JSON.parse over a second.
 * Hand-written: JSON.parse says nothing of a text's size before it has built it.
 */
export function moreJsonValuesThan(text: string, limit: number): boolean {
  // Cheap first: the separators anywhere, strings included, found by native search (the usual text stops here).
  if (separatorsAnywhere(text, limit) <= limit) return false;
  return separatorsOutsideStrings(text, limit) > limit;
}

function separatorsAnywhere(text: string, limit: number): number {
  let count = 0;
  for (const separator of [",", ":", "[", "{"]) {
    for (let at = text.indexOf(separator); at !== -1 && count <= limit; at = text.indexOf(separator, at + 1)) count++;
  }
  return count;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;

/** Stops counting once past `limit`. */
function separatorsOutsideStrings(text: string, limit: number): number {
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length && count <= limit; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === COMMA || c === COLON || c === OPEN_ARRAY || c === OPEN_OBJECT) count++;
  }
  return count;
}
