import { chmod, lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLogSink, LogFileError } from "../../src/log/logger.js";

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

  it("never writes through, renames or removes links planted where rotated files go: records stay in our own file", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-rotation-"));
    const file = path.join(dir, "wiretap.ndjson");
    const victim = path.join(dir, "victim.txt");
    await writeFile(victim, "precious\n");
    for (const n of [1, 2, 3]) await symlink(victim, `${file}.${n}`);
    const sink = createLogSink({ file, maxSize: 2_000, keep: 3 });
    for (let i = 0; i < 200; i++) {
      sink.logger.info({ event: "rpc", n: i, pad: "x".repeat(40) });
      if (i % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await sink.flush();
    expect(await readFile(victim, "utf8")).toBe("precious\n");
    for (const n of [1, 2, 3]) expect((await lstat(`${file}.${n}`)).isSymbolicLink()).toBe(true);
    const info = await lstat(file);
    expect(info.isFile()).toBe(true);
    expect(info.mode & 0o777).toBe(0o600);
    const seqs = (await readFile(file, "utf8")).split("\n").filter(Boolean).map((line) => (JSON.parse(line) as { n: number }).n);
    expect(seqs).toEqual([...Array(200).keys()]);
  });
});

describe.runIf(process.platform !== "win32")("an existing --log-file", () => {
  it("is appended to when it is a private file of our own", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-logfile-"));
    const file = path.join(dir, "log.ndjson");
    await writeFile(file, '{"event":"old"}\n', { mode: 0o600 });
    const sink = createLogSink({ file });
    sink.logger.info({ event: "start" });
    await sink.flush();
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('{"event":"old"}');
  });

  it("is refused when others can read it: the error says how to fix it, and the file is left as it was", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-logfile-"));
    const file = path.join(dir, "log.ndjson");
    await writeFile(file, "before\n");
    await chmod(file, 0o644);
    expect(() => createLogSink({ file })).toThrow(LogFileError);
    expect(() => createLogSink({ file })).toThrow(`--log-file ${file} has mode 0644: other users can read it. If nobody else should have, run \`chmod 600 ${file}\``);
    expect((await stat(file)).mode & 0o777).toBe(0o644);
    expect(await readFile(file, "utf8")).toBe("before\n");
  });

  it("is refused when it is a symbolic link (planted to redirect the records), and the link's target is untouched", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-logfile-"));
    const target = path.join(dir, "their-file");
    await writeFile(target, "theirs\n", { mode: 0o600 });
    const file = path.join(dir, "log.ndjson");
    await symlink(target, file);
    expect(() => createLogSink({ file })).toThrow(/--log-file .*log\.ndjson is a symbolic link\. .*give the path of the file itself, or remove the link/);
    expect(await readFile(target, "utf8")).toBe("theirs\n");
    expect((await stat(target)).mode & 0o777).toBe(0o600);
  });

  it("left cut off mid-record by an earlier run: the next records start on a line of their own", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-logfile-"));
    const file = path.join(dir, "log.ndjson");
    await writeFile(file, '{"event":"old"}\n{"level":"info","ev', { mode: 0o600 });
    const sink = createLogSink({ file });
    sink.logger.info({ event: "start" });
    await sink.flush();
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    expect(lines[1]).toBe('{"level":"info","ev');
    expect(JSON.parse(lines[2]!)).toMatchObject({ event: "start" });
  });

  it("is created 0600 in new folders made 0700", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-logfile-"));
    const file = path.join(dir, "logs", "today", "log.ndjson");
    const sink = createLogSink({ file });
    sink.logger.info({ event: "start" });
    await sink.flush();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.join(dir, "logs"))).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(dir, "logs", "today"))).mode & 0o777).toBe(0o700);
  });
});
