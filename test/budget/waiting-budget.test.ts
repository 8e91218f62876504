import { describe, expect, it } from "vitest";
import { WaitingBudget } from "../../src/budget/waiting-budget.js";

/** A stream's source as the budget sees it: whether it is paused now, and how often it was. */
function source(): { paused: boolean; pauses: number; pause: () => () => void } {
  const s = {
    paused: false,
    pauses: 0,
    pause: () => {
      expect(s.paused).toBe(false);
      s.paused = true;
      s.pauses++;
      return () => void (s.paused = false);
    },
  };
  return s;
}

describe("the budget of what waits behind a judgement", () => {
  it("pauses a stream past its own budget and resumes it once half of it is written", () => {
    const budget = new WaitingBudget(100, 10_000);
    const a = source();
    budget.attach("a", a.pause);
    budget.add("a", 60);
    budget.add("a", 40);
    expect(a.paused).toBe(false);
    budget.add("a", 1);
    expect(a.paused).toBe(true);
    budget.add("a", 30);
    expect(a.pauses).toBe(1);
    budget.remove("a", 60);
    expect(a.paused).toBe(true);
    budget.remove("a", 40);
    expect(a.paused).toBe(false);
    expect(budget.usage()).toMatchObject({ used: 31, peakStream: 131, pauses: 1, paused: 0 });
  });

  it("never pauses a stream that waits for nothing, nor one whose source is gone", () => {
    const budget = new WaitingBudget(100, 150);
    const a = source();
    const b = source();
    budget.attach("a", a.pause);
    budget.attach("b", b.pause);
    budget.add("a", 100);
    budget.add("gone", 100);
    expect(budget.usage().used).toBe(200);
    // Past the total: b is not paused as long as it adds nothing.
    expect(b.paused).toBe(false);
    budget.detach("a");
    budget.add("a", 1);
    expect(a.paused).toBe(false);
  });

  it("pauses whichever stream adds while the process is past its total, and resumes them once half of it is written", () => {
    const budget = new WaitingBudget(100, 200);
    const streams = ["a", "b", "c"].map((name) => ({ name, s: source() }));
    for (const { name, s } of streams) budget.attach(name, s.pause);
    budget.add("a", 90);
    budget.add("b", 90);
    expect(streams.map(({ s }) => s.paused)).toEqual([false, false, false]);
    budget.add("c", 30);
    // c is within its own budget, but the total is passed.
    expect(streams.map(({ s }) => s.paused)).toEqual([false, false, true]);
    budget.add("a", 5);
    expect(streams.map(({ s }) => s.paused)).toEqual([true, false, true]);
    // 215 → 125: not yet half the total; c still holds 30 of its own.
    budget.remove("b", 90);
    expect(streams.map(({ s }) => s.paused)).toEqual([true, false, true]);
    budget.remove("a", 95);
    expect(streams.map(({ s }) => s.paused)).toEqual([false, false, false]);
    expect(budget.usage()).toMatchObject({ used: 30, streams: 1, paused: 0, pauses: 2, peak: 215 });
  });

  it("pauses every stream that adds while paused ones wait for the total to be half spent, so that they do resume", () => {
    const budget = new WaitingBudget(100, 200);
    const [a, b, c] = [source(), source(), source()];
    budget.attach("a", a.pause);
    budget.attach("b", b.pause);
    budget.attach("c", c.pause);
    budget.add("a", 90);
    budget.add("b", 90);
    budget.add("c", 30);
    expect(c.paused).toBe(true);
    // b's first bytes written, new ones added: the total stays above half, and b waits too.
    budget.remove("b", 90);
    budget.add("b", 10);
    expect(b.paused).toBe(true);
    budget.remove("a", 90);
    expect([a.paused, b.paused, c.paused]).toEqual([false, false, false]);
  });

  it("resumes a paused stream when its source goes, and forgets streams that hold nothing", () => {
    const budget = new WaitingBudget(10, 100);
    const a = source();
    budget.attach("a", a.pause);
    budget.add("a", 20);
    expect(a.paused).toBe(true);
    budget.detach("a");
    expect(a.paused).toBe(false);
    budget.remove("a", 20);
    expect(budget.usage()).toMatchObject({ used: 0, streams: 0, paused: 0 });
    expect(budget.bytesOf("a")).toBe(0);
  });
});
