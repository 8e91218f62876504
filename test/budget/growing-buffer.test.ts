import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GrowingBuffer } from "../../src/budget/growing-buffer.js";
import { InspectBudget } from "../../src/budget/inspect-budget.js";

describe("GrowingBuffer", () => {
  it("keeps exactly the bytes appended, whatever the chunking, and views them whole between appends", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 700 }), { maxLength: 40 }), fc.array(fc.nat(39)), (chunks, viewsAt) => {
        const buffer = new GrowingBuffer();
        const views = new Set(viewsAt);
        chunks.forEach((chunk, i) => {
          expect(buffer.append(chunk)).toBe(true);
          if (views.has(i)) expect(buffer.view()).toEqual(Buffer.concat(chunks.slice(0, i + 1)));
        });
        expect(buffer.view()).toEqual(Buffer.concat(chunks));
        expect(buffer.length).toBe(Buffer.concat(chunks).length);
      }),
    );
  });

  it("a million 1-byte appends cost a few dozen slabs, charged at most twice the bytes", () => {
    const budget = new InspectBudget(64 * 1024 * 1024);
    const charge = budget.charge("peer");
    const buffer = new GrowingBuffer(charge);
    const one = Buffer.from("x");
    for (let i = 0; i < 1_000_000; i++) buffer.append(one);
    expect(buffer.length).toBe(1_000_000);
    expect(charge.bytes).toBeGreaterThanOrEqual(1_000_000);
    expect(charge.bytes).toBeLessThanOrEqual(2_000_000);
    expect(buffer.view().equals(Buffer.alloc(1_000_000, "x"))).toBe(true);
    buffer.clear();
    expect(budget.usage().used).toBe(0);
  });

  it("refuses an append its charge cannot grow to hold, keeping what it had", () => {
    const budget = new InspectBudget(4096, 1024);
    const buffer = new GrowingBuffer(budget.charge("a"));
    expect(buffer.append(Buffer.alloc(600, 1))).toBe(true);
    expect(buffer.append(Buffer.alloc(600, 2))).toBe(false);
    expect(buffer.view()).toEqual(Buffer.alloc(600, 1));
    expect(budget.usage().refused).toBe(1);
  });
});

describe("InspectBudget", () => {
  it("one peer never takes more than its share; the others keep theirs", () => {
    const budget = new InspectBudget(4000, 1000);
    const hostile = Array.from({ length: 10 }, () => budget.charge("client 10.0.0.1"));
    const granted = hostile.filter((c) => c.resize(300)).length;
    expect(granted).toBe(3);
    expect(budget.charge("server a:443").resize(1000)).toBe(true);
    expect(budget.usage()).toMatchObject({ used: 1900, largestPeer: 1000, peers: 2, refused: 7 });
  });

  it("the whole budget bounds every peer together", () => {
    const budget = new InspectBudget(2000, 1000);
    expect(budget.charge("a").resize(1000)).toBe(true);
    expect(budget.charge("b").resize(1000)).toBe(true);
    expect(budget.charge("c").resize(1)).toBe(false);
  });

  it("released charges leave no trace: a peer holding nothing is forgotten", () => {
    const budget = new InspectBudget(2000);
    const charges = Array.from({ length: 100 }, (_, i) => budget.charge(`client 10.0.0.${i}`));
    for (const c of charges) c.resize(10);
    for (const c of charges) c.release();
    expect(budget.usage()).toMatchObject({ used: 0, peers: 0 });
  });
});
