/**
 * The official SDK's StdioClientTransport launching a stdio MCP server either directly or through
 * `mcp-wiretap stdio` (the built CLI), so that a test can compare both runs and read the records.
 */
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { waitUntil } from "./wait-until.js";
import { assertBuilt, CLI_MAIN, NODE_BIN, readRecords, REPO_ROOT, type LogRecord } from "./proxy-harness.js";

export const EVERYTHING_STDIO = path.join(REPO_ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
export const SCRIPTED_STDIO = path.join(REPO_ROOT, "test", "helpers", "scripted-stdio-server.mjs");

export interface StdioRun {
  client: Client;
  transport: StdioClientTransport;
  /** What the launched process wrote on stderr. */
  stderr(): string;
  close(): Promise<void>;
}

export interface ShimOptions {
  logFile: string;
  /** Options of `mcp-wiretap stdio` before `--`. */
  args?: string[];
}

/** A fresh temp folder for one test's files. */
export function tempDir(prefix = "mcp-wiretap-stdio-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** The argv that runs `server` (a node script and its args) through the shim, or directly without `shim`. */
export function launchArgs(server: string[], shim?: ShimOptions): { command: string; args: string[] } {
  if (!shim) return { command: NODE_BIN, args: server };
  assertBuilt();
  // Tool pins go next to the log, not into the package's certs/.
  const pins = ["--ca-dir", path.join(path.dirname(shim.logFile), "pins")];
  return { command: NODE_BIN, args: [CLI_MAIN, "stdio", "--log-file", shim.logFile, ...pins, ...(shim.args ?? []), "--", NODE_BIN, ...server] };
}

export async function connectStdio(server: string[], shim?: ShimOptions, { timeoutMs = 10_000, env = {} as Record<string, string> } = {}): Promise<StdioRun> {
  const { command, args } = launchArgs(server, shim);
  const transport = new StdioClientTransport({ command, args, stderr: "pipe", cwd: REPO_ROOT, env: { ...env, PATH: process.env.PATH ?? "" } });
  let err = "";
  let exited = false;
  transport.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  // The process's stderr ends when it exits (it has no children left holding it).
  transport.stderr?.on("end", () => (exited = true));
  const client = new Client({ name: "stdio-test-client", version: "1.0.0" });
  try {
    await client.connect(transport, { timeout: timeoutMs });
  } catch (err) {
    // The SDK closes the transport of a failed connect without waiting: wait here, so the records are all written.
    await waitUntil(() => exited, { timeoutMs: 10_000, what: "the launched process to exit" });
    throw err;
  }
  return { client, transport, stderr: () => err, close: () => client.close() };
}

export async function records(logFile: string): Promise<LogRecord[]> {
  return readRecords(logFile);
}

export const rpcRecords = (all: LogRecord[]): LogRecord[] => all.filter((r) => r.event === "rpc");
