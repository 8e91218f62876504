/**
 * A large log (`ui`, `tail`, `mcp` reading a file given to them, followed or not) is read a chunk at a time:
 * its first lines come before the rest of the file is read, and the reader never holds the whole file's
 * lines at once (the `mcp` server's index, bounded in bytes, would otherwise be defeated by the reader).
 */
import { appendFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fileLines } from "../../src/saved-logs/follow.js";
import { tempDir } from "../policy/policy-fixtures.js";

const tmp = tempDir("mcp-wiretap-large-log-");
afterAll(() => tmp.cleanup());

/** About 48 MB of short records: held at once as strings they take well over 100 MB of heap. */
const file = path.join(tmp.dir, "large.ndjson");
const line = `${JSON.stringify({ event: "rpc", kind: "request", method: "tools/call", tool: "echo", pad: "x".repeat(40) })}\n`;
const block = line.repeat(Math.ceil((1024 * 1024) / line.length));
for (let i = 0; i < 48; i++) appendFileSync(file, block);

describe("a large log file", () => {
  for (const follow of [false, true]) {
    it(`${follow ? "followed" : "read once"}: the first line comes before the file is held in memory`, async () => {
      const before = process.memoryUsage().heapUsed;
      const stop = new AbortController();
      let grown = 0;
      let count = 0;
      for await (const l of fileLines(file, { follow, signal: stop.signal, pollMs: 10 })) {
        if (count++ === 0) {
          grown = process.memoryUsage().heapUsed - before;
          expect(l).toBe(line.trimEnd());
          stop.abort();
          break;
        }
      }
      expect(grown).toBeLessThan(32 * 1024 * 1024);
    });
  }
});
