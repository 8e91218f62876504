/**
 * Monitor mode passes each chunk on as it arrives (half a line reaches the server at once); enforce mode
 * holds a line until it is whole and judged.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, NODE_BIN, REPO_ROOT } from "../helpers/proxy-harness.js";
import { SCRIPTED_STDIO, tempDir } from "../helpers/stdio-shim.js";
import { waitUntil } from "../helpers/wait-until.js";

const dir = tempDir();
const enforcePolicy = path.join(dir, "enforce.yaml");
writeFileSync(enforcePolicy, "mode: enforce\n");

async function halfLine(mode: "monitor" | "enforce"): Promise<{ beforeNewline: string; after: string }> {
  const received = path.join(dir, `${mode}.received`);
  const config = mode === "enforce" ? ["--config", enforcePolicy] : [];
  const child = spawn(NODE_BIN, [CLI_MAIN, "stdio", "--log-file", path.join(dir, `${mode}.ndjson`), "--ca-dir", dir, ...config, "--", NODE_BIN, SCRIPTED_STDIO], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", RECEIVED_LOG: received },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stderr.resume();
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  const read = (): string => (existsSync(received) ? readFileSync(received, "utf8") : "");
  child.stdin.write('{"jsonrpc":"2.0","id":1,');
  // Monitor: the half line arrives; enforce: give it the same time to (not) arrive.
  await waitUntil(() => read() !== "", { timeoutMs: 3000, what: "the half line" }).catch(() => undefined);
  const beforeNewline = read();
  child.stdin.write('"method":"ping"}\n');
  await waitUntil(() => out.includes('"id":1'), { timeoutMs: 10_000, what: "the answer" });
  child.stdin.end();
  await new Promise((resolve) => child.once("close", resolve));
  return { beforeNewline, after: read() };
}

describe("stdio relay: when bytes move", () => {
  it("monitor mode: half a line reaches the server before its end does", async () => {
    const r = await halfLine("monitor");
    expect(r.beforeNewline).toBe('{"jsonrpc":"2.0","id":1,');
    expect(r.after).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  }, 30_000);

  it("enforce mode: nothing reaches the server until the line is whole and judged", async () => {
    const r = await halfLine("enforce");
    expect(r.beforeNewline).toBe("");
    expect(r.after).toBe('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
  }, 30_000);
});
