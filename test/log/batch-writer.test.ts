import { execFileSync, spawnSync } from "node:child_process";
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, readSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BatchWriter } from "../../src/log/batch-writer.js";
import { LogHealth } from "../../src/log/log-health.js";

let dir: string;
let warnings: string[];
let health: LogHealth;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-writer-"));
  warnings = [];
  health = new LogHealth("pass", "the log", (line) => warnings.push(line));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const record = (seq: number, pad = 40): string => `${JSON.stringify({ seq, pad: "x".repeat(pad) })}\n`;
/** The seq of every whole line (a pipe may hand over the last one in part). */
const seqsOf = (text: string): number[] =>
  text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { seq: number }).seq);
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("BatchWriter", () => {
  it("writes the records of one event-loop turn together, in order, to a 0600 file", async () => {
    const file = path.join(dir, "log.ndjson");
    const writer = new BatchWriter({ target: { file }, maxBufferedBytes: 1 << 20, health });
    for (let i = 0; i < 100; i++) writer.write(record(i));
    expect(statSync(file).size).toBe(0); // nothing yet: the turn is not over
    await turn();
    expect(seqsOf(readFileSync(file, "utf8"))).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await writer.close();
    expect(health.failing).toBeNull();
  });

  it("appends to an existing file and counts its size towards rotation", async () => {
    const file = path.join(dir, "log.ndjson");
    const first = new BatchWriter({ target: { file }, maxBufferedBytes: 1 << 20, health });
    first.write(record(0, 500));
    await first.close();
    const second = new BatchWriter({ target: { file }, maxSize: 600, keep: 1, maxBufferedBytes: 1 << 20, health });
    second.write(record(1, 200));
    await second.close();
    expect(seqsOf(readFileSync(`${file}.1`, "utf8"))).toEqual([0, 1]);
    expect(readFileSync(file, "utf8")).toBe("");
  });

  it("rotates logrotate style and drops what is beyond `keep`", async () => {
    const file = path.join(dir, "log.ndjson");
    const writer = new BatchWriter({ target: { file }, maxSize: 1000, keep: 2, maxBufferedBytes: 1 << 20, health });
    for (let batch = 0; batch < 8; batch++) {
      for (let i = 0; i < 10; i++) writer.write(record(batch * 10 + i)); // ~600 bytes a batch
      await turn();
    }
    await writer.close();
    expect(readdirSync(dir).sort()).toEqual(["log.ndjson", "log.ndjson.1", "log.ndjson.2"]);
    const [live, one, two] = ["", ".1", ".2"].map((suffix) => seqsOf(readFileSync(`${file}${suffix}`, "utf8")));
    // Newest in the live file, older in .1, oldest kept in .2; whole batches in each.
    expect(live).toEqual([]);
    expect(one).toEqual(Array.from({ length: 20 }, (_, i) => 60 + i));
    expect(two).toEqual(Array.from({ length: 20 }, (_, i) => 40 + i));
    for (const name of readdirSync(dir)) expect(statSync(path.join(dir, name)).mode & 0o777).toBe(0o600);
  });

  it("when rotation fails, keeps writing to the file, warns once, and rotates later once it can", async () => {
    const file = path.join(dir, "log.ndjson");
    // Non-empty directories where the rotated files should go: the renames fail.
    for (const n of [1, 2]) mkdirSync(path.join(`${file}.${n}`, "in-the-way"), { recursive: true });
    const writer = new BatchWriter({ target: { file }, maxSize: 1000, keep: 2, maxBufferedBytes: 1 << 20, health });
    for (let batch = 0; batch < 4; batch++) {
      for (let i = 0; i < 10; i++) writer.write(record(batch * 10 + i)); // ~600 bytes a batch
      await turn();
    }
    expect(seqsOf(readFileSync(file, "utf8"))).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(health.failing).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/cannot rotate the log: .*log\.ndjson\.1 is not a regular file, which is never renamed or replaced; records are still written/);
    for (const n of [1, 2]) rmSync(`${file}.${n}`, { recursive: true });
    for (let batch = 4; batch < 8; batch++) {
      for (let i = 0; i < 10; i++) writer.write(record(batch * 10 + i));
      await turn();
    }
    await writer.close();
    // Rotated at last: the 60 records written meanwhile went out together, then rotation went on as usual.
    expect(seqsOf(readFileSync(`${file}.2`, "utf8"))).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(seqsOf(readFileSync(`${file}.1`, "utf8"))).toEqual(Array.from({ length: 20 }, (_, i) => 60 + i));
    expect(readFileSync(file, "utf8")).toBe("");
  });

  it("on a full device: says so once, counts the lost records, and goes on", async () => {
    const writer = new BatchWriter({ target: { file: "/dev/full" }, maxBufferedBytes: 1 << 20, health });
    for (let i = 0; i < 5; i++) writer.write(record(i));
    await turn();
    writer.write(record(5));
    await turn();
    expect(health.failing).toMatchObject({ code: "ENOSPC" });
    expect(health.dropped).toBe(6);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("cannot write log records to the log: ENOSPC");
    await writer.close();
  });

  it("holds what a busy pipe refuses (EAGAIN) and delivers every record in order once it is read", async () => {
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    // Read-write and non-blocking: opening does not wait for a reader, and a full pipe answers EAGAIN.
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      const writer = new BatchWriter({ target: { fd }, maxBufferedBytes: 16 << 20, health });
      const count = 3000; // ~180 KB: more than a pipe holds
      for (let i = 0; i < count; i++) writer.write(record(i));
      writer.flushNow();
      let text = "";
      const chunk = Buffer.alloc(64 * 1024);
      for (const deadline = Date.now() + 10_000; seqsOf(text).length < count && Date.now() < deadline; ) {
        try {
          const n = readSync(fd, chunk, 0, chunk.length, null);
          text += chunk.toString("utf8", 0, n);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      }
      expect(seqsOf(text)).toEqual(Array.from({ length: count }, (_, i) => i));
      expect(health.failing).toBeNull();
      expect(health.dropped).toBe(0);
      await writer.close();
    } finally {
      closeSync(fd);
    }
  });

  it("past maxBufferedBytes of a stuck target, drops and counts records instead of growing", async () => {
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      const writer = new BatchWriter({ target: { fd }, maxBufferedBytes: 256 * 1024, health });
      for (let i = 0; i < 10_000; i++) writer.write(record(i)); // ~600 KB, nobody reads
      writer.flushNow();
      expect(health.dropped).toBeGreaterThan(0);
      expect(warnings.some((w) => w.includes("DROPPED"))).toBe(true);
      await writer.close(50);
    } finally {
      closeSync(fd);
    }
  });

  it("after a write cut off mid-record (file size limit), the next records start on a line of their own", () => {
    const file = path.join(dir, "limited.ndjson");
    // `ulimit -f 2`: the file may not grow past 2048 bytes; a write across the limit is cut short (and the
    // rest fails with EFBIG), as on a disk that fills up mid-write. The first turn's records fill ~1,500
    // bytes; the second turn's ~1,500 cannot all fit. The file is then cut back to the middle of record 10
    // (room again, a torn line at its end), and a third turn is written.
    const script = `
      import { truncateSync } from "node:fs";
      import { BatchWriter } from ${JSON.stringify(path.resolve("dist/log/batch-writer.js"))};
      import { LogHealth } from ${JSON.stringify(path.resolve("dist/log/log-health.js"))};
      process.on("SIGXFSZ", () => {});
      const health = new LogHealth("pass", "x", (line) => process.stdout.write(line));
      const writer = new BatchWriter({ target: { file: ${JSON.stringify(file)} }, maxBufferedBytes: 1 << 20, health });
      const record = (seq) => JSON.stringify({ seq, pad: "x".repeat(130) }) + "\\n";
      for (let i = 0; i < 10; i++) writer.write(record(i));
      writer.flushNow();
      for (let i = 10; i < 20; i++) writer.write(record(i));
      writer.flushNow();
      truncateSync(${JSON.stringify(file)}, 10 * record(0).length + 60);
      writer.write(record(99));
      writer.flushNow();
      process.stdout.write("dropped " + health.dropped + "\\n");
    `;
    const result = spawnSync("bash", ["-c", 'ulimit -f 2 && exec "$0" --input-type=module -e "$1"', process.execPath, script], { encoding: "utf8", timeout: 20_000 });
    expect(result.stderr).toBe("");
    expect(result.stdout).toContain("cannot write log records to x: EFBIG");
    expect(result.stdout).toContain("dropped 10");
    const lines = readFileSync(file, "utf8").split("\n");
    // Whole records 0-9, the start of record 10 cut at the truncation, then record 99 on a line of its own.
    expect(lines.slice(0, 10).map((line) => (JSON.parse(line) as { seq: number }).seq)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect(lines[10]).toMatch(/^\{"seq":10,/);
    expect(JSON.parse(lines[11]!)).toMatchObject({ seq: 99 });
  });

  it("writes the last turn's records when the process exits before the turn ends", () => {
    const file = path.join(dir, "exit.ndjson");
    const script = `
      import { BatchWriter } from ${JSON.stringify(path.resolve("dist/log/batch-writer.js"))};
      import { LogHealth } from ${JSON.stringify(path.resolve("dist/log/log-health.js"))};
      const writer = new BatchWriter({ target: { file: ${JSON.stringify(file)} }, maxBufferedBytes: 1 << 20, health: new LogHealth("pass", "x") });
      for (let i = 0; i < 3; i++) writer.write(JSON.stringify({ seq: i }) + "\\n");
      process.exit(0);
    `;
    const result = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000 });
    expect(result.stderr).toBe("");
    expect(seqsOf(readFileSync(file, "utf8"))).toEqual([0, 1, 2]);
  });
});
