/**
 * Raw bytes through `mcp-wiretap stdio` (the built CLI) to a server, and the Python reference readers
 * (reference-readers.py) that read a stream as each family of receiver does (not a test file).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { assertBuilt, CLI_MAIN, NODE_BIN, REPO_ROOT } from "./proxy-harness.js";

export const PYTHON = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => existsSync(p));
export const READERS_PY = path.join(REPO_ROOT, "test", "helpers", "reference-readers.py");

export interface RawRun {
  /** What the client received. */
  toClient: Buffer;
  stderr: string;
  code: number | null;
}

/** Writes `input` to the shim's stdin, closes it, and waits for the shim to exit (bounded). */
export function throughShim(args: string[], server: string[], input: Buffer, env: Record<string, string> = {}, timeoutMs = 20_000): Promise<RawRun> {
  assertBuilt();
  const child = spawn(NODE_BIN, [CLI_MAIN, "stdio", ...args, "--", ...server], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const out: Buffer[] = [];
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => out.push(c));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdin.on("error", () => undefined);
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcp-wiretap stdio did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ toClient: Buffer.concat(out), stderr, code });
    });
  });
}

/** What one reference reader read: each message's kind, method, tool, id (JSON text, exact) and error code. */
export interface ReadMessage {
  kind: "request" | "notification" | "answer";
  method: string | null;
  tool: string | null;
  id: string | null;
  code: number | null;
}

export const PYTHON_READERS = ["universal-strict", "universal-replace", "splitlines", "cstring", "stream", "universal-bom"] as const;
export type PythonReader = (typeof PYTHON_READERS)[number];

/** The messages `bytes` holds for one of the Python reference readers. */
export function pythonRead(mode: PythonReader, bytes: Buffer): ReadMessage[] {
  const run = spawnSync(PYTHON!, [READERS_PY, "read", mode], { input: bytes, timeout: 10_000 });
  if (run.status !== 0) throw new Error(`reference reader ${mode} failed: ${run.stderr.toString()}`);
  return run.stdout
    .toString()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as ReadMessage);
}
