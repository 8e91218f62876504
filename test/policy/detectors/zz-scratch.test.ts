import { it, expect } from "vitest";
import fc from "fast-check";
import { scanAll, DETECTOR_NAMES, stripHidden, type DetectorName } from "../../../src/policy/detectors/index.js";
const ALL = new Set<DetectorName>(DETECTOR_NAMES);
it("t", () => {
  const anyCodeUnit = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), maxLength: 200 });
  const anyCodePoint = fc.string({ unit: "binary", maxLength: 200 });
  for (let seed = 0; seed < 8; seed++) {
    let inside = 0; let worst = 0; let worstText = "";
    const t0 = performance.now();
    fc.assert(fc.property(fc.oneof(anyCodeUnit, anyCodePoint), (text) => {
      const s = performance.now();
      scanAll({ [text]: text }, ALL);
      const st = stripHidden(text); expect(stripHidden(st)).toBe(st);
      const d = performance.now() - s; inside += d; if (d > worst) { worst = d; worstText = text; }
    }), { numRuns: 500, seed });
    console.log(seed, (performance.now() - t0).toFixed(0), inside.toFixed(0), worst.toFixed(0), JSON.stringify(worstText).slice(0, 80));
  }
});
