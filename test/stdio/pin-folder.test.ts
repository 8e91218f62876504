/**
 * Where a launch without --ca-dir keeps its tool pins: in the per-user state folder its logs go to (0700,
 * pins.json 0600), never in the package's certs/ (root's in a global install, shared by every user).
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, it } from "vitest";
import { assertBuilt, CLI_MAIN, NODE_BIN, REPO_ROOT } from "../helpers/proxy-harness.js";
import { SCRIPTED_STDIO, tempDir } from "../helpers/stdio-shim.js";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The package's certs/pins.json as it is: absent, or its size and modification time. */
function packagePins(): string {
  const file = path.join(REPO_ROOT, "certs", "pins.json");
  if (!existsSync(file)) return "absent";
  const s = statSync(file);
  return `${s.size}:${s.mtimeMs}`;
}

describe("stdio without --ca-dir", () => {
  it("keeps the pins in the per-user state folder, private, and leaves the package's certs/ alone", async () => {
    assertBuilt();
    const state = path.join(dir, "state");
    const home = path.join(dir, "home");
    mkdirSync(home);
    const before = packagePins();
    const transport = new StdioClientTransport({
      command: NODE_BIN,
      args: [CLI_MAIN, "stdio", "--name", "scripted", "--", NODE_BIN, SCRIPTED_STDIO],
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: home, XDG_STATE_HOME: state },
      stderr: "pipe",
    });
    const client = new Client({ name: "pin-folder-test", version: "1.0.0" });
    await client.connect(transport, { timeout: 10_000 });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("echo");
    await client.close();

    const folder = path.join(state, "mcp-wiretap");
    const pins = path.join(folder, "pins.json");
    expect(existsSync(pins)).toBe(true);
    expect(statSync(pins).mode & 0o777).toBe(0o600);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    // The same folder as the launch's log, and nothing written under HOME's default or the package.
    expect(readdirSync(folder).some((f) => /-scripted-\d+\.ndjson$/.test(f))).toBe(true);
    expect(existsSync(path.join(home, ".local"))).toBe(false);
    expect(packagePins()).toBe(before);
  });
});
