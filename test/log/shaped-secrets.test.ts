import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maskShapedText, maskShapedTextOnce } from "../../src/log/shaped-secrets.js";

const alnum = fc.string({ unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"), minLength: 36, maxLength: 40 });
/** Ordinary texts and secret-shaped ones (tokens with known markers, bearer tokens, keys by member name). */
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.string({ unit: "grapheme-ascii", maxLength: 80 }),
  alnum.map((s) => `ghp_${s.slice(0, 36)}`),
  alnum.map((s) => `Bearer ${s}`),
  alnum.map((s) => `AKIA${s.slice(0, 16).toUpperCase()}`),
  alnum.map((s) => s.slice(0, 40)),
  fc.constant("x".repeat(2000)),
);
const memberName = fc.option(fc.oneof(fc.constantFrom("authorization", "aws_secret_access_key", "twilio_auth_token", "user-agent", ""), fc.string({ maxLength: 10 })), { nil: undefined });

describe("maskShapedTextOnce", () => {
  it("gives the verdict of a fresh scan, the first time and every time after", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(text, memberName), { minLength: 1, maxLength: 8 }), (pairs) => {
        for (let round = 0; round < 2; round++) {
          for (const [value, name] of pairs) expect(maskShapedTextOnce(value, name)).toBe(maskShapedText(value, name));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("keeps member names apart: the same text under another name is judged again", () => {
    const key = "A".repeat(20) + "b".repeat(20);
    expect(maskShapedTextOnce(key, "user-agent")).toBe(key);
    expect(maskShapedTextOnce(key, "aws_secret_access_key")).toBe("[redacted: aws_secret_access_key]");
    expect(maskShapedTextOnce(key)).toBe(key);
  });
});
