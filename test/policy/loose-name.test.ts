/**
 * The normalised reading of method and tool names (NFKC, invisible characters dropped, trimmed, lower case)
 * takes a shortcut for plain ASCII names; it must give exactly what the full normalisation gives.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { looseName } from "../../src/policy/name-readings.js";

const full = (name: string): string => name.normalize("NFKC").replace(/[\p{Cc}\p{Cf}]/gu, "").trim().toLowerCase();

describe("looseName", () => {
  it("equals the full normalisation on any string, ASCII or not", () => {
    const tricky = fc.constantFrom("Get_Sum", "get-sum ", " tools/call", "ｇｅｔ", "get\u200bsum", "GET\u0000", "\u00ad", "ﬁle", "İ", "K", "\ud800", "a\tb", "~!{}");
    const name = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)) }), tricky, fc.array(tricky).map((a) => a.join("")));
    fc.assert(fc.property(name, (n) => {
        expect(looseName(n)).toBe(full(n));
      }), { numRuns: 2000 });
  });
});
