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
  const open = text.charCodeAt(start);
  if (open !== 0x7b /* { */ && open !== 0x5b /* [ */) return null;
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = closingQuote(text, i);
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      if (depth === 0) {
        if (text.slice(i + 1).trim() === "") return null;
        const parsed = parseJsonText(text.slice(start, i + 1));
        return parsed.ok ? { parsed, doubt: "the body goes on after its first JSON value (some parsers read only that value)" } : null;
      }
    }
  }
  return null;
}
