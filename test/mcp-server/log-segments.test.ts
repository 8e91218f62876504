/**
 * A held record's file is opened again by name when its handle was closed (past MAX_OPEN_SEGMENTS open
 * files): whatever now has that name must not stop the server. A FIFO planted there would block an open
 * for reading until a writer comes, in the thread pool, and the tool call with it. So would the follower of
 * a log whose name a FIFO takes after a rotation.
 */
import { execFileSync } from "node:child_process";
import { constants, linkSync, mkdtempSync, openSync, closeSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_OPEN_SEGMENTS, Segment, SegmentFiles } from "../../src/mcp-server/log-segments.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-segments-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(process.platform === "win32")("a held record's file opened again", () => {
  it("says a FIFO planted at its name is another file, at once", async () => {
    const files = new SegmentFiles();
    const segments: Segment[] = [];
    for (let i = 0; i <= MAX_OPEN_SEGMENTS; i++) {
      const file = path.join(dir, `log-${i}.ndjson`);
      writeFileSync(file, `{"n":${i}}\n`);
      const s = statSync(file);
      const segment = new Segment({ file, dev: s.dev, ino: s.ino, truncations: 0 });
      segment.held = 1;
      await files.attach(segment);
      segments.push(segment);
    }
    // The first file's handle was closed to keep within the bound: it is opened again by name.
    expect(segments[0]!.handle).toBeNull();
    const first = segments[0]!.file;
    renameSync(first, `${first}.old`);
    execFileSync("mkfifo", [first]);
    try {
      const read = files.read(segments[0]!, 0, 4);
      const timedOut = new Promise<string>((r) => setTimeout(() => r("no answer within 2 s"), 2_000));
      const got = await Promise.race([read, timedOut]);
      expect(got).toMatch(/is now another file/);
    } finally {
      letBlockedOpenGo(first);
      await files.closeAll();
    }
  });
});

describe.skipIf(process.platform === "win32")("a followed log replaced by a FIFO", () => {
  it("is not waited on: a regular file put there later is followed", async () => {
    const { serveLogs } = await import("../../src/mcp-server/served-logs.js");
    const file = path.join(dir, "followed.ndjson");
    writeFileSync(file, `${JSON.stringify({ event: "rpc", id: 1 })}\n`);
    const fifo = path.join(dir, "fifo");
    const served = await serveLogs([file], { pollMs: 20 });
    try {
      await served.ready;
      renameSync(file, `${file}.1`);
      execFileSync("mkfifo", [file]);
      // Another name for the FIFO: what lets a blocked open go once the test is over.
      linkSync(file, fifo);
      await new Promise((r) => setTimeout(r, 300));
      rmSync(file);
      writeFileSync(file, `${JSON.stringify({ event: "rpc", id: 2 })}\n`);
      const start = Date.now();
      while (served.index.size < 2 && Date.now() - start < 2_000) await new Promise((r) => setTimeout(r, 20));
      expect(served.index.size).toBe(2);
    } finally {
      letBlockedOpenGo(fifo);
      await served.close();
    }
  });
});

/** An open blocked on the FIFO `fifo` is let go (a writer comes), so that no thread of the pool stays stuck. */
function letBlockedOpenGo(fifo: string): void {
  try {
    closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
  } catch {
    // no reader blocked on it
  }
}
