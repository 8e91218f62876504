import * as fs from "node:fs";
import { mkdtemp, readdir, readFile, rm, lstat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

/** Set by the test: a symbolic link to plant at `file` right after the writer renames `file` to `file.1`. */
const plant: { file: string | null; target: string } = { file: null, target: "" };

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const renameSync = (from: fs.PathLike, to: fs.PathLike): void => {
    real.renameSync(from, to);
    if (plant.file !== null && from === plant.file) real.symlinkSync(plant.target, plant.file);
  };
  return { ...real, renameSync, default: { ...real, renameSync } };
});

const { createLogSink } = await import("../../src/log/logger.js");

let dir: string;
afterEach(async () => {
  Object.assign(plant, { file: null, target: "" });
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("log rotation against a link planted between the rename and the new file", () => {
  it("does not write through it: rotation fails with a warning, records keep going to our own file", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-rotation-race-"));
    const file = path.join(dir, "wiretap.ndjson");
    const victim = path.join(dir, "victim.txt");
    await writeFile(victim, "precious\n");
    Object.assign(plant, { file, target: victim });
    const warnings: string[] = [];
    const stderrWrite = vi.spyOn(process.stderr, "write").mockImplementation((line) => (warnings.push(String(line)), true));
    try {
      const sink = createLogSink({ file, maxSize: 1_000, keep: 2 });
      for (let i = 0; i < 60; i++) {
        sink.logger.info({ event: "rpc", n: i, pad: "x".repeat(40) });
        if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await sink.flush();
    } finally {
      stderrWrite.mockRestore();
    }
    expect(await readFile(victim, "utf8")).toBe("precious\n");
    expect(warnings.join("")).toMatch(/cannot rotate .*EEXIST/);
    const records: number[] = [];
    for (const name of await readdir(dir)) {
      const info = await lstat(path.join(dir, name));
      if (!info.isFile() || name === "victim.txt") continue;
      expect(info.mode & 0o777).toBe(0o600);
      for (const line of (await readFile(path.join(dir, name), "utf8")).split("\n").filter(Boolean)) records.push((JSON.parse(line) as { n: number }).n);
    }
    expect(records).toContain(59);
  });
});
