/**
 * The built CLI (`dist/cli/main.js start`) as a child process, for tests that measure the proxy as a
 * process of its own (memory and file descriptors from /proc, signals, exit codes).
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readRecords, spawnCli, testCaFile, type LogRecord, type SpawnedCli } from "./proxy-harness.js";

export interface CliProxy {
  cli: SpawnedCli;
  child: ChildProcess;
  pid: number;
  host: string;
  port: number;
  url: string;
  caPem: string;
  /** The CA folder it uses (--ca-dir). */
  caDir: string;
  logFile: string;
  records(): Promise<LogRecord[]>;
  waitForRecord(match: (r: LogRecord) => boolean, what: string, timeoutMs?: number): Promise<LogRecord>;
  /** Stops it (SIGKILL if still running) and removes its files. */
  dispose(): Promise<void>;
}

/** `caDir`: a CA folder shared with other replicas (made by the first that starts), kept at dispose. */
export async function startCliProxy(extra: string[] = [], opts: { caDir?: string } = {}): Promise<CliProxy> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-cli-"));
  const caDir = opts.caDir ?? path.join(dir, "ca");
  const logFile = path.join(dir, "log.ndjson");
  const cli = spawnCli(["start", "--port", "0", "--ca-dir", caDir, "--log-file", logFile, "--upstream-ca", testCaFile(), ...extra]);
  const dispose = async (): Promise<void> => {
    cli.kill();
    await cli.exited;
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const [, url] = await cli.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 20_000);
    const records = () => readRecords(logFile);
    return {
      cli,
      child: cli.child,
      pid: cli.child.pid!,
      host: "127.0.0.1",
      port: Number(new URL(url!).port),
      url: url!,
      caPem: await readFile(path.join(caDir, "ca.pem"), "utf8"),
      caDir,
      logFile,
      records,
      async waitForRecord(match, what, timeoutMs = 10_000) {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const found = (await records()).find(match);
          if (found) return found;
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      dispose,
    };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** Open file descriptors of a process. */
export function fdCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Resident set size of a process, in bytes (from /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  if (!kb) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}
