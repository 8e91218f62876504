import { closingQuote } from "./json-text.js";

/**
 * One pass over the member names: the first given twice in one object, and whether any is `__proto__`
 * (JSON.parse makes it an own member; a JavaScript receiver that copies the object with assignment,
 * `Object.assign` or a hand-written merge, sets the copy's prototype from it instead).
 */
function scanMembers(text: string): { duplicate: string | null; proto: boolean } {
  let proto = false;
  // Per open container: the names seen (objects) or null (arrays), and whether a name comes next.
  const names: (Set<string> | null)[] = [];
  let expectName = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = closingQuote(text, i);
      const top = names[names.length - 1];
      if (expectName && top) {
        const raw = text.slice(i + 1, end);
        const name = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.has(name)) return { duplicate: name, proto };
        if (name === "__proto__") proto = true;
        top.add(name);
        expectName = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      names.push(new Set());
      expectName = true;
    } else if (c === 0x5b /* [ */) {
      names.push(null);
      expectName = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      names.pop();
      expectName = false;
    } else if (c === 0x2c /* , */) {
      expectName = names[names.length - 1] != null;
    }
  }
  return { duplicate: null, proto };
}

/**
 * Why a JSON text may be read otherwise because of its member names, or null: a name given twice in one
 * object (parsers disagree on `{"name":"echo","name":"get-env"}`: JSON.parse keeps the last, others the first
 * or refuse it), or `__proto__`. Hand-written because JSON.parse hides duplicates; `text` must already be
 * valid JSON (it is scanned, not validated).
 */
export function duplicateMemberDoubt(text: string): string | null {
  const { duplicate, proto } = scanMembers(text);
  if (duplicate !== null) return `member ${JSON.stringify(duplicate).slice(0, 80)} appears twice in one object (receivers may read either value)`;
  return proto ? `a member is named "__proto__" (a JavaScript receiver that copies the object takes it as its prototype)` : null;
}
