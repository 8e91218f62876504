import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rememberingClean } from "../../src/detectors/clean-texts.js";
import type { TextContext } from "../../src/detectors/finding.js";
import { piiScanner } from "../../src/detectors/pii.js";
import { secretsScanner } from "../../src/detectors/secrets.js";

const alnum = fc.string({ unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"), minLength: 36, maxLength: 40 });
/** Ordinary texts, and ones shaped like secrets or PII. */
const text = fc.oneof(
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme-ascii", maxLength: 60 }),
  fc.constantFrom("jsonrpc", "arguments", "hello from the bench", "4111 1111 1111 1111", "078-05-1120", "someone@example.com", "x".repeat(300)),
  alnum.map((s) => `ghp_${s.slice(0, 36)}`),
  alnum.map((s) => `Bearer ${s}`),
  alnum.map((s) => s.slice(0, 40)),
);
const context: fc.Arbitrary<TextContext> = fc.record({
  kind: fc.constantFrom("value", "key", "number") as fc.Arbitrary<TextContext["kind"]>,
  memberName: fc.option(fc.oneof(fc.constantFrom("ssn", "aws_secret_access_key", "text", "", "n".repeat(65)), fc.string({ maxLength: 8 })), { nil: undefined }),
});

describe("rememberingClean", () => {
  for (const scanner of [secretsScanner, piiScanner]) {
    it(`finds what ${scanner.name} finds, the first time and every time after`, () => {
      const remembering = rememberingClean(scanner, scanner === secretsScanner ? 12 : 6);
      expect(remembering.name).toBe(scanner.name);
      fc.assert(
        fc.property(fc.array(fc.tuple(text, context), { minLength: 1, maxLength: 8 }), (pairs) => {
          for (let round = 0; round < 2; round++) {
            for (const [t, c] of pairs) expect(remembering.scanText(t, c)).toEqual(scanner.scanText(t, c));
          }
        }),
        { numRuns: 500 },
      );
    });
  }

  it("keeps contexts apart: a text clean under one member name is scanned again under another", () => {
    const remembering = rememberingClean(secretsScanner);
    const key = "A".repeat(20) + "b".repeat(20);
    expect(remembering.scanText(key, { kind: "value", memberName: "text" })).toEqual([]);
    expect(remembering.scanText(key, { kind: "value", memberName: "aws_secret_access_key" })).toHaveLength(1);
  });

  it("keeps nothing a peer can make large or useless: long member names, long texts, texts under the minimum", () => {
    let scans = 0;
    const counting = rememberingClean({ name: "secrets", scanText: () => (scans++, []) }, 12);
    const twice = (text: string, memberName?: string): number => {
      scans = 0;
      counting.scanText(text, { kind: "value", memberName });
      counting.scanText(text, { kind: "value", memberName });
      return scans;
    };
    expect(twice("an ordinary value", "text")).toBe(1);
    expect(twice("an ordinary value", "n".repeat(64))).toBe(1);
    expect(twice("an ordinary value", "n".repeat(65))).toBe(2);
    expect(twice("x".repeat(257), "text")).toBe(2);
    expect(twice("short", "text")).toBe(2);
  });
});
