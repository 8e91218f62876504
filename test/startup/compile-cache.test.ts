/** The CLI's compile cache: a private per-user folder, used only when it is ours and not writable by others. */
import { chmodSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/proxy-harness.js";
import { tempDir } from "../helpers/stdio-shim.js";

describe("compile cache", () => {
  it("is created 0700 under XDG_CACHE_HOME and filled by a launch", async () => {
    const cache = tempDir("mcp-wiretap-cache-");
    const r = await runCli(["--version"], { env: { XDG_CACHE_HOME: cache, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined } });
    expect(r.code).toBe(0);
    const dir = path.join(cache, "mcp-wiretap", "compile-cache");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir).length).toBeGreaterThan(0);
  });

  it("a folder others can write to is not used (code planted there would run as ours); the CLI runs all the same", async () => {
    const cache = tempDir("mcp-wiretap-cache-");
    const dir = path.join(cache, "mcp-wiretap", "compile-cache");
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    const r = await runCli(["--version"], { env: { XDG_CACHE_HOME: cache, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined } });
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });
});
