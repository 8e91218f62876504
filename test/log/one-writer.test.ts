/**
 * One writer per log. A second proxy (or stdio launch) on a log file already in use appended its records
 * between the first one's: with --audit-chain each numbered and chained its own, and the log then failed
 * `verify-log`. Now the second is refused and told what to do; a device (/dev/null) is shared as before.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogSink } from "../../src/log/logger.js";
import { NODE_BIN, runCli, startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { SCRIPTED_STDIO } from "../helpers/stdio-shim.js";

let dir: string;
const running: TestProxy[] = [];
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-one-writer-"));
});
afterEach(async () => {
  for (const p of running.splice(0)) await p.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe("one writer per log", () => {
  it("a second proxy on a log in use is refused with what to do; once the first stops, the log is free", async () => {
    const logFile = path.join(dir, "shared.ndjson");
    const caDir = path.join(dir, "ca");
    running.push(await startTestProxy({ logFile, caDir, auditChain: true }));
    await expect(startTestProxy({ logFile, caDir, auditChain: true })).rejects.toThrow(/shared\.ndjson is in use by another mcp-wiretap \(pid \d+\).*its own log file.*remove .*shared\.ndjson\.lock/s);
    await running.pop()!.stop();
    expect(existsSync(`${logFile}.lock`)).toBe(false);
    running.push(await startTestProxy({ logFile, caDir, auditChain: true }));
  });

  it("a stdio launch on a log a proxy writes is refused, and writes nothing to it", async () => {
    const logFile = path.join(dir, "proxy.ndjson");
    running.push(await startTestProxy({ logFile, caDir: path.join(dir, "ca") }));
    const before = readFileSync(logFile, "utf8");
    const result = await runCli(["stdio", "--log-file", logFile, "--ca-dir", path.join(dir, "ca2"), "--", NODE_BIN, SCRIPTED_STDIO]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/proxy\.ndjson is in use by another mcp-wiretap \(pid \d+\)/);
    expect(readFileSync(logFile, "utf8")).toBe(before);
  });

  it("a lock left by a writer that died is taken over", async () => {
    const logFile = path.join(dir, "crashed.ndjson");
    writeFileSync(`${logFile}.lock`, `2147483646\n${os.hostname()}\n`, { mode: 0o600 });
    running.push(await startTestProxy({ logFile, caDir: path.join(dir, "ca") }));
    expect(readFileSync(`${logFile}.lock`, "utf8")).toBe(`${process.pid}\n${os.hostname()}\n`);
  });

  it("/dev/null is a stream, not a log: any number of writers share it", async () => {
    const a = createLogSink({ file: "/dev/null" });
    const b = createLogSink({ file: "/dev/null" });
    a.logger.info({ event: "stop", reason: "a" });
    b.logger.info({ event: "stop", reason: "b" });
    await Promise.all([a.flush(), b.flush()]);
    expect(existsSync("/dev/null.lock")).toBe(false);
  });
});
