import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogSink } from "../../src/log/logger.js";

let dir: string;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("log file rotation", () => {
  it("rotates past --log-max-size, keeps --log-keep files, each 0600 and made of whole records", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-rotation-"));
    const file = path.join(dir, "wiretap.ndjson");
    const sink = createLogSink({ file, maxSize: 4_000, keep: 2 });
    for (let i = 0; i < 300; i++) {
      sink.logger.info({ event: "rpc", seq: i, pad: "x".repeat(40) });
      if (i % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await sink.flush();
    const files = (await readdir(dir)).sort();
    expect(files).toEqual(["wiretap.ndjson", "wiretap.ndjson.1", "wiretap.ndjson.2"]);
    const seqs: number[] = [];
    for (const name of files) {
      expect((await stat(path.join(dir, name))).mode & 0o777).toBe(0o600);
      const lines = (await readFile(path.join(dir, name), "utf8")).split("\n").filter(Boolean);
      for (const line of lines) seqs.push((JSON.parse(line) as { seq: number }).seq);
    }
    // The newest records are all there, none twice; the oldest were rotated away.
    expect(seqs).toContain(299);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).not.toContain(0);
  });

  it("writes a 0600 file without rotation when no size is given", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-rotation-"));
    const file = path.join(dir, "plain.ndjson");
    const sink = createLogSink({ file });
    sink.logger.info({ event: "start" });
    await sink.flush();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse((await readFile(file, "utf8")).trim())).toMatchObject({ event: "start", level: "info" });
  });
});
