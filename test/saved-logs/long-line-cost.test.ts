/**
 * A log with a very long line (a hostile or broken file given to `ui`, `tail`, `mcp`): the line arrives in
 * the reader's 64 KiB chunks, and each chunk costs its own length, not the length of the line so far.
 * Joining and splitting the whole partial line on every chunk made a 24 MB line cost seconds of CPU (32 MB:
 * 7 s) and a file of 64 MiB pieces minutes; now it is linear.
 */
import { describe, expect, it } from "vitest";
import { LineSplitter } from "../../src/saved-logs/reader.js";

const CHUNK = Buffer.alloc(64 * 1024, "a");

describe("a very long line", () => {
  it("24 MB without a newline, in 64 KiB chunks, is split in well under a second; the lines around it are whole", () => {
    const splitter = new LineSplitter();
    const lines: string[] = [...splitter.push('{"first":1}\n')];
    const started = performance.now();
    for (let i = 0; i < (24 * 1024 * 1024) / CHUNK.length; i++) lines.push(...splitter.push(CHUNK));
    lines.push(...splitter.push('\n{"last":2}\n'));
    const ms = performance.now() - started;
    expect(lines.map((l) => (l.length > 100 ? l.length : l))).toEqual(['{"first":1}', 24 * 1024 * 1024, '{"last":2}']);
    expect(ms).toBeLessThan(1_000);
  });

  it("a UTF-8 character split across chunks is joined, with and without a newline in the chunk", () => {
    const splitter = new LineSplitter();
    const euro = Buffer.from("€");
    expect(splitter.push(Buffer.concat([Buffer.from("ab"), euro.subarray(0, 1)]))).toEqual([]);
    expect(splitter.push(euro.subarray(1, 2))).toEqual([]);
    expect(splitter.push(Buffer.concat([euro.subarray(2), Buffer.from("c\r\nd")]))).toEqual(["ab€c"]);
    expect(splitter.flush()).toEqual(["d"]);
  });
});
