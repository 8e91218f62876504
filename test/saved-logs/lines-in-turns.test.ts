import { describe, expect, it } from "vitest";
import { CHARS_PER_TURN, eachLineInTurns, LINES_PER_TURN, linesWithInTurns, oneHeldPassAtATime, recordsInTurns } from "../../src/saved-logs/lines-in-turns.js";

/** Counts the turns of the loop the other work got while `work` ran (one fewer than the pauses: the first is shared). */
async function turnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const tick = (): void => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  await work;
  done = true;
  return turns;
}

describe("lines in turns", () => {
  it("visits every line in order and lets the loop turn between slices of lines", async () => {
    const lines = Array.from({ length: LINES_PER_TURN * 5 }, (_, i) => `{"n":${i}}`);
    const seen: number[] = [];
    const turns = await turnsDuring(eachLineInTurns(lines, (_l, i) => void seen.push(i)));
    expect(seen).toEqual(lines.map((_, i) => i));
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it("turns between long lines too, not only every thousand lines", async () => {
    const long = "x".repeat(CHARS_PER_TURN);
    const turns = await turnsDuring(eachLineInTurns([long, long, long, long], () => undefined));
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it("keeps JSON objects with their lines and leaves out anything else", async () => {
    const got = await recordsInTurns(['{"a":1}', "not json", "[1,2]", "null", ' {"b":2}', '{"c":']);
    expect(got).toEqual([
      { record: { a: 1 }, line: '{"a":1}' },
      { record: { b: 2 }, line: ' {"b":2}' },
    ]);
  });

  it("a throwing visitor stops the pass and rejects with what it threw", async () => {
    const seen: string[] = [];
    const pass = eachLineInTurns(["a", "b", "c"], (l) => {
      if (l === "b") throw new Error("too much");
      seen.push(l);
    });
    await expect(pass).rejects.toThrow("too much");
    expect(seen).toEqual(["a"]);
    expect(await linesWithInTurns(["ab", "b", "cb", "c"], (l) => l.endsWith("b"))).toEqual(["ab", "b", "cb"]);
  });

  it("held passes run one at a time, in the order asked, and a failed one does not hold up the next", async () => {
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const pass = (name: string, fail = false) => async () => {
      running++;
      most = Math.max(most, running);
      log.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      log.push(`end ${name}`);
      running--;
      if (fail) throw new Error(`${name} failed`);
      return name;
    };
    const results = await Promise.allSettled([oneHeldPassAtATime(pass("download")), oneHeldPassAtATime(pass("tokens", true)), oneHeldPassAtATime(pass("lookup"))]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(most).toBe(1);
    expect(log).toEqual(["start download", "end download", "start tokens", "end tokens", "start lookup", "end lookup"]);
  });
});
