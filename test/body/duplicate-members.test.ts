import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { duplicateMemberDoubt } from "../../src/body/duplicate-members.js";

/** The member name the doubt says appears twice, or null. */
function duplicateMember(text: string): string | null {
  const match = /^member (".*") appears twice in one object/.exec(duplicateMemberDoubt(text) ?? "");
  return match ? (JSON.parse(match[1]!) as string) : null;
}

describe("duplicateMemberDoubt", () => {
  it("finds a name given twice in one object, however it is written", () => {
    expect(duplicateMember('{"name":"echo","name":"get-env"}')).toBe("name");
    expect(duplicateMember('{"params":{"name":"echo","arguments":{},"\\u006eame":"get-env"}}')).toBe("name");
    expect(duplicateMember('[1,{"a":[{"b":1,"b":2}]}]')).toBe("b");
    expect(duplicateMember('{"a\\"b":1,"a\\"b":2}')).toBe('a"b');
  });

  it("does not confuse values, other objects or escaped quotes with names", () => {
    expect(duplicateMember('{"a":"a","b":{"a":1},"c":[{"a":2},{"a":3}]}')).toBeNull();
    expect(duplicateMember('{"a":"x\\",\\"a\\":\\"y","b":"\\\\"}')).toBeNull();
    expect(duplicateMember('{"a":{},"b":[],"c":{"a":[]}}')).toBeNull();
  });

  it("finds none in anything JSON.stringify writes (fast-check)", () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 6 }), (text) => {
        expect(duplicateMember(text)).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("finds the one added to any object JSON.stringify writes (fast-check)", () => {
    fc.assert(
      // Names short enough that the doubt quotes them whole.
      fc.property(fc.dictionary(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1 }), (obj) => {
        const text = JSON.stringify(obj);
        const name = Object.keys(obj)[0]!;
        const doubled = `${text.slice(0, -1)},${JSON.stringify(name)}:null}`;
        expect(duplicateMember(doubled)).toBe(name);
      }),
      { numRuns: 300 },
    );
  });

  it("a member named __proto__ is a doubt of its own; none at all is null", () => {
    expect(duplicateMemberDoubt('{"a":{"__proto__":{"admin":true}}}')).toMatch(/named "__proto__"/);
    expect(duplicateMemberDoubt('{"a":1,"b":[{"c":2}]}')).toBeNull();
  });
});
