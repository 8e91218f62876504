/**
 * `mcp-wiretap mcp` runs with its heap settings (src/startup/node-flags.ts) without the client's config
 * entry naming any: it starts again in the same process with them, unless the user chose the setting.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MCP_NODE_FLAGS } from "../../src/startup/node-flags.js";
import { skipNote } from "../helpers/skip-note.js";
import { CLI_MAIN as CLI } from "../helpers/proxy-harness.js";
import { tempDir } from "../helpers/stdio-shim.js";


const canLook = existsSync("/proc/self/cmdline") && typeof (process as { execve?: unknown }).execve === "function";
skipNote(import.meta.url, !canLook, "needs /proc and a Node with process.execve");

/** The command line the server runs with, read once it serves (the same process it was started as). */
async function servedCommandLine(env: NodeJS.ProcessEnv): Promise<string[]> {
  const child = spawn(process.execPath, [CLI, "mcp", tempDir("mcp-wiretap-relaunch-")], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
  try {
    await new Promise<void>((resolve, reject) => {
      let err = "";
      const timer = setTimeout(() => reject(new Error(`no start within 20 s: ${err}`)), 20_000);
      child.stderr.on("data", (c: Buffer) => {
        err += c.toString();
        if (err.includes("MCP server on stdio")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    return readFileSync(`/proc/${child.pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } finally {
    child.stdin.end();
    child.kill();
  }
}

describe.skipIf(!canLook)("mcp's heap settings", () => {
  it("are applied in the process the client started; a setting the user chose is kept", async () => {
    const args = await servedCommandLine({ NODE_OPTIONS: "" });
    expect(args.slice(1, 1 + MCP_NODE_FLAGS.length)).toEqual(MCP_NODE_FLAGS);
    expect(args.slice(-2)[0]).toBe("mcp");
    const chosen = await servedCommandLine({ NODE_OPTIONS: "--max-semi-space-size=2" });
    expect(chosen.filter((a) => a.startsWith("--"))).toEqual([]);
  });
});
