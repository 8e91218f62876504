/**
 * The name readings judged beside a message; foldedMember skips names of another length before folding them:
 * the same member as folding every name, on random objects whose names mix ASCII, case, ſ, the Kelvin sign
 * and other letters.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { foldedMember, nameReadings } from "../../src/policy/name-readings.js";

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

describe("nameReadings", () => {
  const call = (params: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ jsonrpc: "2.0", id: 1, method: "tools/call", params, ...extra });
  const names = (raw: unknown): [unknown, unknown][] =>
    nameReadings(raw).map((r) => [(r as { method: unknown }).method, ((r as { params?: { name?: unknown } }).params ?? {}).name]);

  it("none for a message whose names are already in normal form", () => {
    expect(nameReadings(call({ name: "echo", arguments: {} }))).toEqual([]);
  });

  it("its own names normalised, whatever other members differ only in case", () => {
    expect(names(call({ name: "delete_everything ", NAME: 5 }))).toEqual([["tools/call", "delete_everything"]]);
    expect(names({ ...call({ name: "delete_everything" }), method: "Tools/Call", METHOD: 0 })).toEqual([["tools/call", "delete_everything"]]);
    expect(names(call({ name: "Delete_Everything", NAME: "echo" }))).toEqual([
      ["tools/call", "delete_everything"],
      ["tools/call", "echo"],
    ]);
  });

  it("the members Go reads: the last case-folded match", () => {
    expect(names(call({ name: "echo", Name: "delete_everything" }))).toEqual([["tools/call", "delete_everything"]]);
    expect(names(call({ NAME: "delete_everything" }))).toEqual([["tools/call", "delete_everything"]]);
    expect(names({ jsonrpc: "2.0", id: 1, method: "ping", METHOD: "tools/call", Params: { name: "x" } })).toEqual([["tools/call", "x"]]);
  });
});
