import { describe, expect, it } from "vitest";
import { mergeByTime, timeOfLine } from "../../../src/ui/server/merge-by-time.js";

const line = (name: string, second: number | null): string =>
  JSON.stringify({ level: "info", ...(second === null ? {} : { time: `2026-11-27T10:00:${String(second).padStart(2, "0")}.000Z` }), name });

async function* lines(list: string[]): AsyncGenerator<string> {
  yield* list;
}

const names = (out: string[]): string[] => out.map((l) => (JSON.parse(l) as { name: string }).name);

describe("mergeByTime", () => {
  it("interleaves logs by time; equal times keep the order given; a line with no time stays behind the one before it", async () => {
    const out: string[] = [];
    const rest = await mergeByTime(
      [
        { lines: lines([line("a1", 1), line("a3", 3), line("a-none", null), line("a5", 5)]) },
        { lines: lines([line("b0", 0), line("b3", 3), line("b4", 4)]) },
      ],
      (l) => out.push(l),
    );
    expect(names(out)).toEqual(["b0", "a1", "a3", "a-none", "b3", "b4", "a5"]);
    expect(rest).toEqual([]);
  });

  it("merges a followed log up to where it caught up; what is appended after is left to read live", async () => {
    let caught: () => void = () => undefined;
    const caughtUp = new Promise<void>((resolve) => (caught = resolve));
    let release: () => void = () => undefined;
    const later = new Promise<void>((resolve) => (release = resolve));
    async function* followed(): AsyncGenerator<string> {
      yield line("f2", 2);
      caught();
      await later;
      yield line("f9", 9);
    }
    const out: string[] = [];
    const rest = await mergeByTime([{ lines: followed(), caughtUp }, { lines: lines([line("g1", 1), line("g3", 3)]) }], (l) => out.push(l));
    expect(names(out)).toEqual(["g1", "f2", "g3"]);
    expect(rest).toHaveLength(1);
    release();
    const next = await rest[0]!.pending!;
    expect(names([next.value as string])).toEqual(["f9"]);
  });

  it("reads the time from the logger's first members, or by parsing when something comes before it", () => {
    expect(timeOfLine('{"level":"info","time":"2026-11-27T10:00:01.000Z","event":"rpc"}')).toBe(Date.parse("2026-11-27T10:00:01.000Z"));
    expect(timeOfLine('{"params":{"time":"2000-01-01T00:00:00Z"},"time":"2026-11-27T10:00:01.000Z"}')).toBe(Date.parse("2026-11-27T10:00:01.000Z"));
    expect(timeOfLine("not json")).toBeNull();
  });
});
