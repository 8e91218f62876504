/**
 * foldedMember skips names of another length before folding them: the same member as folding every name,
 * on random objects whose names mix ASCII, case, ſ, the Kelvin sign and other letters.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldedMember } from "../../src/policy/enforcement.js";

function foldEveryName(object: Record<string, unknown>, field: string): unknown {
  let value: unknown;
  for (const key of Object.keys(object)) {
    if (key.toLowerCase().replaceAll("\u017f", "s").replaceAll("\u212a", "k") === field) value = object[key];
  }
  return value;
}

const letter = fc.constantFrom(..."methodparamsnameMETHODPARAMSNAME\u017f\u212a\u0130\u0131\u00dfK".split(""), "\ud83d\ude00");
const name = fc.oneof(fc.constantFrom("method", "Method", "METHOD", "params", "Params", "name", "NAME", "na\u212ae", "param\u017f", "\u0130d"), fc.array(letter, { maxLength: 8 }).map((l) => l.join("")));

describe("foldedMember", () => {
  it("finds the member folding every name finds", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(name, fc.integer()), { maxLength: 8 }), fc.constantFrom("method", "params", "name"), (members, field) => {
        const object: Record<string, unknown> = {};
        for (const [k, v] of members) object[k] = v;
        expect(foldedMember(object, field)).toBe(foldEveryName(object, field));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads Go's case-insensitive matches, the last one winning", () => {
    expect(foldedMember({ name: "echo", Name: "delete_everything" }, "name")).toBe("delete_everything");
    expect(foldedMember({ METHOD: "tools/call", method: "ping" }, "method")).toBe("ping");
    expect(foldedMember({ ["param\u017f"]: 1 }, "params")).toBe(1);
  });
});
