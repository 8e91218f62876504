/**
 * `fileSpans` (what `mcp-wiretap mcp` reads logs with): each line with the byte offset and length it has in
 * the file, so that the line can be read again from there. Checked against the file's own bytes and
 * against `LineSplitter` (what `tail` and `ui` read) over arbitrary chunk boundaries.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FileSpanSplitter } from "../../src/saved-logs/line-spans.js";
import { LineSplitter } from "../../src/saved-logs/reader.js";

const piece = fc.constantFrom("a", "Z", "{", '"', "é", "€", "😀", "\r", " ", "\u202e");
const line = fc.array(piece, { maxLength: 12 }).map((p) => p.join(""));
const ending = fc.constantFrom("\n", "\r\n");

describe("line spans", () => {
  it("give each line the bytes it has in the file, as LineSplitter reads the lines, however the file is chunked", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(line, ending), { maxLength: 8 }), line, fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 6 }), (lines, last, cuts) => {
        const file = Buffer.from(lines.map(([l, e]) => l + e).join("") + last);
        const spans = new FileSpanSplitter();
        const reference = new LineSplitter();
        const got: { line: string; offset: number; bytes: number }[] = [];
        const expected: string[] = [];
        for (let at = 0, i = 0; at < file.length; i++) {
          const size = cuts[i % cuts.length]!;
          // The caller reuses its buffer: the splitter must not keep a view of it.
          const chunk = Buffer.from(file.subarray(at, at + size));
          got.push(...spans.push(chunk));
          expected.push(...reference.push(chunk));
          chunk.fill(0);
          at += size;
        }
        got.push(...spans.flush());
        expected.push(...reference.flush());
        expect(got.map((s) => s.line)).toEqual(expected);
        for (const s of got) expect(file.toString("utf8", s.offset, s.offset + s.bytes)).toBe(s.line);
      }),
      { numRuns: 300 },
    );
  });

  it("start again at offset 0 for a new file or a truncated one, saying which", () => {
    const spans = new FileSpanSplitter();
    const first = { file: "a.ndjson", dev: 1, ino: 2, truncations: 0 };
    spans.reset(first);
    expect(spans.push(Buffer.from("ab\ncd\n"))).toEqual([
      { line: "ab", offset: 0, bytes: 2, source: first },
      { line: "cd", offset: 3, bytes: 2, source: first },
    ]);
    const truncated = { ...first, truncations: 1 };
    spans.reset(truncated);
    expect(spans.push(Buffer.from("xyz\n"))).toEqual([{ line: "xyz", offset: 0, bytes: 3, source: truncated }]);
  });
});
