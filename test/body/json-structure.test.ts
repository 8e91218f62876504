import { describe, expect, it } from "vitest";
import { parseJsonText } from "../../src/body/json-body.js";
import { moreJsonValuesThan } from "../../src/body/json-structure.js";

/** The separators and opening brackets a parsed JSON value's text holds outside strings, counted from its values (an independent count). */
function separatorsOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, value.length - 1) + value.reduce((n: number, v) => n + separatorsOf(v), 0);
  if (value !== null && typeof value === "object") {
    const members = Object.values(value);
    return 1 + Math.max(0, members.length - 1) + members.reduce((n: number, v) => n + 1 + separatorsOf(v), 0);
  }
  return 0;
}

describe("counting a JSON text's values before parsing it", () => {
  it("counts members (name and value) and elements, not what strings hold", () => {
    const texts = ['{"a":1,"b":[1,2,3],"c":{"d":"x,y:z"}}', '["a\\",b", ":", {"k\\\\":","}]', "[]", "{}", '"a,b,c"', "[[[1]],[2,3]]"];
    for (const text of texts) {
      const n = separatorsOf(JSON.parse(text));
      expect(moreJsonValuesThan(text, n), text).toBe(false);
      if (n > 0) expect(moreJsonValuesThan(text, n - 1), text).toBe(true);
    }
  });

  it("counts each object and array a text opens: nesting alone is no way past the limit", () => {
    // 4,000,000 nested arrays in 8 MB hold no comma and no colon, and took JSON.parse over a second in one piece.
    const depth = 300_000;
    for (const [open, close] of [["[", "]"], ['{"a":[', "]}"]]) {
      const text = open!.repeat(depth) + close!.repeat(depth);
      expect(moreJsonValuesThan(text, 200_000), open).toBe(true);
      expect(parseJsonText(text)).toMatchObject({ ok: false, code: "json_too_many_values" });
    }
    expect(moreJsonValuesThan(JSON.stringify({ text: "[{".repeat(300_000) }), 200_000)).toBe(false);
  });

  it("stops reading a long text early either way", () => {
    const members = Array.from({ length: 300_000 }, (_, i) => `"k${i}":1`).join(",");
    expect(moreJsonValuesThan(`{${members}}`, 200_000)).toBe(true);
    expect(moreJsonValuesThan(JSON.stringify({ text: "a,b:".repeat(300_000) }), 200_000)).toBe(false);
  });
});
