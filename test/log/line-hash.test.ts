import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lineHash } from "../../src/log/audit-chain.js";

describe("lineHash (one-shot hash)", () => {
  it("equals the streaming sha256 of the line as UTF-8", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" })), (line) => {
        expect(lineHash(line)).toBe(`sha256:${createHash("sha256").update(line).digest("hex")}`);
      }),
      { numRuns: 1000 },
    );
  });
});
