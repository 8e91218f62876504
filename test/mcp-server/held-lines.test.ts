/**
 * The server holds a record read from a file as its head and its place in the file, and reads the line
 * again to show it or to search its words: the answers must be those of the lines as read, and a file that
 * changed under it must be said, never shown as another record. In-process, on files written here.
 */
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { searchMessages } from "../../src/mcp-server/search.js";
import { serveLogs } from "../../src/mcp-server/served-logs.js";
import { BLOCK_BYTES } from "../../src/mcp-server/text-scan.js";
import { waitUntil } from "../helpers/wait-until.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-held-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const record = (id: number, text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ time: new Date(Date.UTC(2026, 10, 1, 0, 0, id)).toISOString(), event: "rpc", flow: `flow-${String(id).padStart(8, "0")}`, server: "127.0.0.1:1", direction: "client_to_server", kind: "request", id, method: "tools/call", tool: id % 3 === 0 ? "echo" : "add", params: { text }, ...extra });

describe("search over lines read again", () => {
  it("finds what a case-insensitive match in each line as read finds, across blocks, CRLF lines and multi-byte text", async () => {
    const vocabulary = ["Needle", "needle", "NEEDLE-x", "haystack", "café", "CAFÉ", "日本語", "naïve", "\\u00e9t\\u00e9", "tools/call", "x".repeat(40)];
    const lines: string[] = [];
    let text = "";
    for (let i = 0; i < 700; i++) {
      const words = [vocabulary[(i * 7) % vocabulary.length]!, vocabulary[(i * 3 + 1) % vocabulary.length]!];
      // Some records far larger than a block, so that batches split around them.
      const padding = i % 97 === 5 ? " pad".repeat(BLOCK_BYTES / 3) : "";
      // Multi-byte text after the words: a byte offset and a character offset part ways at once.
      const line = record(i, `${words.join(" ")}${padding}`, { note: "ü日".repeat((i % 4) * 20) });
      lines.push(line);
      text += line + (i % 5 === 0 ? "\r\n" : "\n");
    }
    const file = path.join(dir, "words.ndjson");
    writeFileSync(file, text);
    const served = await serveLogs([file]);
    try {
      await served.ready;
      for (const query of ["needle", "NEEDLE", "needle-X", "café", "CAFÉ", "日本語", "NAÏVE", "\\u00e9t", "tools/CALL haystack", "needle café", "tool:echo needle", "absent", "x".repeat(41)]) {
        const words = query.split(" ").filter((w) => !w.includes(":"));
        const tool = query.includes("tool:echo") ? "echo" : null;
        const expected = lines
          .map((l, i) => ({ l, i }))
          .filter(({ l, i }) => words.every((w) => new RegExp(w.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"), "i").test(l)) && (tool === null || i % 3 === 0))
          .map(({ i }) => i)
          .reverse();
        const got: number[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 50; page++) {
          const result = await searchMessages(served.index, { query, limit: 500, maxRecordBytes: 0, maxBytes: 1_000_000, ...(cursor ? { cursor } : {}) });
          got.push(...result.hits.map((h) => h.head!.id as number));
          if (result.nextCursor === null) break;
          cursor = result.nextCursor;
        }
        expect({ query, ids: got }).toEqual({ query, ids: expected });
      }
      // Shown whole, a hit is the record as logged.
      const hit = (await searchMessages(served.index, { query: "日本語", limit: 1 })).hits[0]!;
      expect(JSON.stringify(hit.record)).toBe(lines[hit.record!.id as number]);
    } finally {
      await served.close();
    }
  });
});

describe("a file that changed under the server", () => {
  it("still shows the records of a file rotated away; says a truncated or rewritten file's records are gone", async () => {
    const logs = path.join(dir, "rotating");
    mkdirSync(logs, { mode: 0o700 });
    const current = path.join(logs, "run.ndjson");
    writeFileSync(current, record(1, "before rotation") + "\n");
    const served = await serveLogs([logs], { pollMs: 20 });
    const shown = async (query: string) => (await searchMessages(served.index, { query, limit: 10 })).hits;
    try {
      await served.ready;
      renameSync(current, path.join(logs, "run.ndjson.1"));
      writeFileSync(current, record(2, "after rotation") + "\n");
      await waitUntil(() => served.index.size === 2, { timeoutMs: 3_000 });
      // The old file is no longer under its name: its record is read from the file the server opened.
      expect((await shown("before")).map((h) => h.record?.params)).toEqual([{ text: "before rotation" }]);

      // Rewritten in place, same size: the bytes are there, but not the record that was read.
      const fd = openSync(current, "r+");
      const other = Buffer.from(record(5, "after rotatioN"));
      expect(other.length).toBe(Buffer.byteLength(record(2, "after rotation")));
      writeSync(fd, other, 0, other.length, 0);
      closeSync(fd);
      const rewritten = (await shown("tool:add"))[0]!;
      expect(rewritten.record).toBeUndefined();
      expect(rewritten.gone).toMatch(/no longer holds this record/);
      expect(rewritten.head).toMatchObject({ id: 2 });

      // Truncated and written again: the records read before are gone, the new ones are found.
      truncateSync(current, 0);
      await new Promise((r) => setTimeout(r, 100));
      appendFileSync(current, record(4, "after truncation") + "\n");
      await waitUntil(() => served.index.size === 3, { timeoutMs: 3_000 });
      const after = await shown("");
      expect(after.map((h) => [h.head?.id ?? h.record?.id, h.record !== undefined])).toEqual([[4, true], [2, false], [1, true]]);
      expect(after[1]!.gone).toMatch(/truncated/);
      const words = await searchMessages(served.index, { query: "rotation" });
      expect(words.hits.map((h) => h.record?.id)).toEqual([1]);
      expect(words.note).toMatch(/could not be read again/);
    } finally {
      await served.close();
    }
  });
});
