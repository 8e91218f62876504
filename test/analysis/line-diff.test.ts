import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lineDiff, MAX_CELLS } from "../../src/analysis/line-diff.js";

const side = (diff: ReturnType<typeof lineDiff>, keep: "-" | "+") => diff.filter((l) => l.op === " " || l.op === keep).map((l) => l.text).join("\n");

describe("lineDiff (reports and the web UI)", () => {
  it("its old lines are the old text and its new lines the new text, whatever the texts (fast-check)", () => {
    const text = fc.array(fc.constantFrom("a", "b", "c", ""), { maxLength: 12 }).map((lines) => lines.join("\n"));
    fc.assert(
      fc.property(text, text, (a, b) => {
        const diff = lineDiff(a, b);
        expect(side(diff, "-")).toBe(a);
        expect(side(diff, "+")).toBe(b);
      }),
    );
  });

  it("keeps what did not change", () => {
    expect(lineDiff("a\nb\nc", "a\nx\nc")).toEqual([
      { op: " ", text: "a" },
      { op: "-", text: "b" },
      { op: "+", text: "x" },
      { op: " ", text: "c" },
    ]);
  });

  it("bounds the table by cells: a long text against a short one is still diffed; two long ones are shown whole", () => {
    const long = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n");
    const shortDiff = lineDiff(long, "line 0\nchanged");
    expect(shortDiff.filter((l) => l.op === " ")).toEqual([{ op: " ", text: "line 0" }]);
    const rows = Math.floor(Math.sqrt(MAX_CELLS)) + 1;
    const big = Array.from({ length: rows }, (_, i) => `${i}`).join("\n");
    const whole = lineDiff(big, big);
    expect(whole.every((l) => l.op !== " ")).toBe(true);
    expect(whole).toHaveLength(2 * rows);
  });
});
