import { describe, expect, it } from "vitest";
import { runEach } from "../../src/util/run-each.js";

describe("runEach", () => {
  it("runs every step after one that throws, then throws that error", () => {
    const ran: number[] = [];
    const broke = new Error("second broke");
    const steps = [1, 2, 3].map((n) => () => {
      ran.push(n);
      if (n === 2) throw broke;
    });
    expect(() => runEach(steps)).toThrow(broke);
    expect(ran).toEqual([1, 2, 3]);
  });

  it("throws an AggregateError naming each failure when several fail", () => {
    const fail = (m: string) => () => {
      throw new TypeError(m);
    };
    let thrown: unknown;
    try {
      runEach([fail("a"), () => {}, fail("b")]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AggregateError);
    expect((thrown as AggregateError).errors).toHaveLength(2);
    expect((thrown as Error).message).toBe("TypeError: a; TypeError: b");
  });

  it("returns quietly when nothing fails", () => {
    expect(() => runEach([() => {}, () => {}])).not.toThrow();
  });
});
