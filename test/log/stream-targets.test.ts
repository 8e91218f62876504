/**
 * A log target that is no regular file (/dev/null, a FIFO, /dev/stdout) is a stream: written to, never
 * sized, rotated, renamed or replaced. The device nodes and FIFOs are made in a temporary folder, never the
 * machine's own /dev/null.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { constants, existsSync, lstatSync, mkdtempSync, openSync, readdirSync, rmSync, symlinkSync, writeFileSync, type Stats } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogSink } from "../../src/log/logger.js";
import { NODE_BIN, runCli, spawnCli } from "../helpers/proxy-harness.js";
import { connectStdio, SCRIPTED_STDIO } from "../helpers/stdio-shim.js";
import { waitUntil } from "../helpers/wait-until.js";

const root = process.getuid?.() === 0;
const execFileAsync = promisify(execFile);
let dir: string;
let n = 0;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-streams-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A null device of our own (major 1, minor 3), as /dev/null is. */
function nullDevice(): string {
  const node = path.join(dir, `null${++n}`);
  execFileSync("mknod", ["-m", "666", node, "c", "1", "3"]);
  return node;
}

/** A FIFO (0600) with our read end open first, collecting what is written into it. */
function fifoReader(): { fifo: string; text: () => string; close: () => void } {
  const fifo = path.join(dir, `fifo${++n}`);
  execFileSync("mkfifo", ["-m", "600", fifo]);
  const socket = new net.Socket({ fd: openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false });
  let text = "";
  socket.on("data", (c: Buffer) => (text += c.toString()));
  socket.on("error", () => {});
  return { fifo, text: () => text, close: () => socket.destroy() };
}

function expectSameDevice(node: string, before: Stats): void {
  const after = lstatSync(node);
  expect(after.isCharacterDevice()).toBe(true);
  expect(after.rdev).toBe(before.rdev);
  expect(after.ino).toBe(before.ino);
}

/** Names beside `node` that a rotation would have made. */
const rotatedBeside = (node: string): string[] => readdirSync(path.dirname(node)).filter((f) => f.startsWith(`${path.basename(node)}.`));

describe.runIf(root)("a log on a device node", () => {
  it("is written as a stream: past --log-max-size the node is the same device and nothing is renamed", async () => {
    const node = nullDevice();
    const before = lstatSync(node);
    const sink = createLogSink({ file: node, maxSize: 1024, keep: 3 });
    expect(sink.target).toBe(`${node}, not rotated (a device)`);
    for (let i = 0; i < 100; i++) {
      sink.logger.info({ event: "rpc", seq: i, pad: "x".repeat(100) });
      if (i % 10 === 9) await new Promise((resolve) => setImmediate(resolve));
    }
    await sink.flush();
    expectSameDevice(node, before);
    expect(rotatedBeside(node)).toEqual([]);
    expect(sink.health.failing).toBeNull();
  });

  it("with --audit-chain keeps no state for it, and fails nothing", async () => {
    const node = nullDevice();
    const audit = path.join(dir, `audit${++n}`);
    const sink = createLogSink({ file: node, maxSize: 512, auditChain: { dir: audit } });
    for (let i = 0; i < 50; i++) sink.logger.info({ event: "rpc", seq: i, pad: "y".repeat(100) });
    await sink.flush();
    expect(readdirSync(audit).filter((f) => f.endsWith(".state"))).toEqual([]);
    expect(lstatSync(node).isCharacterDevice()).toBe(true);
  });
});

describe.runIf(process.platform !== "win32")("a log on a FIFO", () => {
  it("gets every record, the FIFO stays a FIFO, and nothing is renamed", async () => {
    const reader = fifoReader();
    const sink = createLogSink({ file: reader.fifo, maxSize: 1024, keep: 2 });
    expect(sink.target).toBe(`${reader.fifo}, not rotated (a FIFO)`);
    for (let i = 0; i < 100; i++) sink.logger.info({ event: "rpc", seq: i, pad: "z".repeat(100) });
    await sink.flush();
    await waitUntil(() => reader.text().split("\n").filter(Boolean).length === 100, { timeoutMs: 5_000, what: "100 records through the FIFO" });
    const seqs = reader.text().split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { seq: number }).seq);
    expect(seqs).toEqual([...Array(100).keys()]);
    expect(lstatSync(reader.fifo).isFIFO()).toBe(true);
    expect(rotatedBeside(reader.fifo)).toEqual([]);
    reader.close();
  });
});

describe.runIf(process.platform !== "win32")("rotation renames only regular files of our own", () => {
  it("a FIFO planted where a rotated file goes stops the rotation with a warning: it is neither renamed nor removed", async () => {
    const file = path.join(dir, `log${++n}.ndjson`);
    execFileSync("mkfifo", ["-m", "600", `${file}.2`]);
    const sink = createLogSink({ file, maxSize: 1024, keep: 2 });
    for (let i = 0; i < 60; i++) sink.logger.info({ event: "rpc", seq: i, pad: "w".repeat(100) });
    await sink.flush();
    expect(lstatSync(`${file}.2`).isFIFO()).toBe(true);
    expect(existsSync(`${file}.1`)).toBe(false);
    expect(lstatSync(file).isFile()).toBe(true);
  });
});

describe("/dev/stdout and /dev/stderr as --log-file", () => {
  it("are written as the descriptors they name, never followed or replaced", async () => {
    const noisy = "for (let i = 0; i < 30; i++) console.error('line ' + i)";
    const stdio = await runCli(["stdio", "--log-file", "/dev/stderr", "--log-max-size", "1K", "--ca-dir", path.join(dir, "pins-stderr"), "--", NODE_BIN, "-e", noisy]);
    expect(stdio.code).toBe(0);
    expect(stdio.stderr.split("\n").filter((l) => l.includes('"event":"stderr"'))).toHaveLength(30);
    expect(lstatSync("/dev/stderr").isSymbolicLink()).toBe(true);
    expect(existsSync("/dev/stderr.1")).toBe(false);
  });

  it("a descriptor that is not open is a clear error at start", async () => {
    const result = await runCli(["stdio", "--log-file", "/dev/fd/77", "--ca-dir", path.join(dir, "pins-fd"), "--", NODE_BIN, "-e", "0"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/--log-file \/dev\/fd\/77: descriptor 77 is not open/);
  });
});

describe.runIf(root)("start, run and stdio with --log-file on a device node or a FIFO", () => {
  let upstream: http.Server;
  let target: string;
  beforeAll(async () => {
    upstream = http.createServer((_req, res) => res.end("ok\n"));
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    target = `http://127.0.0.1:${(upstream.address() as net.AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

  it("start: 40 requests past --log-max-size 1K leave the device as it was", async () => {
    const node = nullDevice();
    const before = lstatSync(node);
    const cli = spawnCli(["start", "--port", "0", "--ca-dir", path.join(dir, `ca${++n}`), "--log-file", node, "--log-max-size", "1K"]);
    try {
      const [, url] = await cli.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 20_000);
      expect(cli.stderr()).toContain(`logs: ${node}, not rotated (a device)`);
      // Not execFileSync: the upstream answers from this process's event loop.
      for (let i = 0; i < 40; i++) await execFileAsync("curl", ["-s", "-o", "/dev/null", "--proxy", url!, target]);
    } finally {
      cli.kill();
      await cli.exited;
    }
    expectSameDevice(node, before);
    expect(rotatedBeside(node)).toEqual([]);
  });

  it("run: the records reach a FIFO, which is neither rotated nor replaced", async () => {
    const reader = fifoReader();
    const loop = `for i in $(seq 30); do curl -s -o /dev/null ${target}; done`;
    const result = await runCli(["run", "--ca-dir", path.join(dir, `ca${++n}`), "--log-file", reader.fifo, "--log-max-size", "1K", "--", "sh", "-c", loop]);
    expect(result.code).toBe(0);
    await waitUntil(() => reader.text().split("\n").filter((l) => l.includes('"event":"http"')).length >= 30, { timeoutMs: 5_000, what: "30 http records in the FIFO" });
    expect(lstatSync(reader.fifo).isFIFO()).toBe(true);
    expect(rotatedBeside(reader.fifo)).toEqual([]);
    reader.close();
  });

  it("stdio: 60 calls past --log-max-size 1K leave the device as it was", async () => {
    const node = nullDevice();
    const before = lstatSync(node);
    const run = await connectStdio([SCRIPTED_STDIO], { logFile: node, pinsDir: path.join(dir, `pins${++n}`), args: ["--log-max-size", "1K"] });
    try {
      for (let i = 0; i < 60; i++) await run.client.callTool({ name: "echo", arguments: { message: `m${i}` } });
    } finally {
      await run.close();
    }
    expectSameDevice(node, before);
    expect(rotatedBeside(node)).toEqual([]);
  });
});

describe.runIf(process.platform !== "win32")("exports and reports never replace what is not a regular file", () => {
  it("export --har onto a FIFO writes into it; onto a link is refused and the link stays", async () => {
    const fixture = path.join(dir, `session${++n}.ndjson`);
    writeFileSync(fixture, "", { mode: 0o600 });
    const reader = fifoReader();
    const result = await runCli(["export", "--har", reader.fifo, path.resolve("test/fixtures/session.ndjson")]);
    expect(result.code).toBe(0);
    await waitUntil(() => reader.text().trimEnd().endsWith("}"), { timeoutMs: 5_000, what: "the HAR in the FIFO" });
    expect(JSON.parse(reader.text())).toHaveProperty("log");
    expect(lstatSync(reader.fifo).isFIFO()).toBe(true);
    reader.close();
    const link = path.join(dir, `linked${++n}.har`);
    symlinkSync(fixture, link);
    const refused = await runCli(["export", "--har", link, path.resolve("test/fixtures/session.ndjson")]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/is a symbolic link/);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});
