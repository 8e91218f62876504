/**
 * wrap then unwrap on a fixture config of each client: only the stdio entries change, each launches its
 * server through `mcp-wiretap stdio`, wrapping twice changes nothing, and unwrap gives back the very bytes.
 */
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ClientId } from "../../src/client-configs/clients.js";
import { findEntries } from "../../src/client-configs/plan.js";
import { locationOfFile } from "../../src/client-configs/clients.js";
import { runWrap, type WrapRun } from "../../src/client-configs/run-wrap.js";
import { REPO_ROOT } from "../helpers/proxy-harness.js";
import { tempDir } from "../helpers/stdio-shim.js";

const FIXTURES = path.join(REPO_ROOT, "test", "fixtures", "client-configs");
const LAUNCHER = { command: "/opt/node/bin/node", prefix: ["/opt/mcp-wiretap/dist/cli/main.js"] };

/** Each fixture, the client that reads it, and the stdio servers in it (what wrap must change). */
const CASES: Array<{ fixture: string; client: ClientId; stdio: string[]; alone: string[] }> = [
  { fixture: "claude_desktop_config.json", client: "claude-desktop", stdio: ["filesystem", "github"], alone: [] },
  { fixture: ".mcp.json", client: "claude-code", stdio: ["local-db"], alone: ["sentry", "legacy"] },
  { fixture: ".claude.json", client: "claude-code", stdio: ["memory", "app-tools"], alone: [] },
  { fixture: "cursor-mcp.json", client: "cursor", stdio: ["everything"], alone: ["remote"] },
  { fixture: "vscode-mcp.json", client: "vscode", stdio: ["playwright", "python"], alone: ["github"] },
  { fixture: "windsurf-mcp_config.json", client: "windsurf", stdio: ["git"], alone: ["figma"] },
  { fixture: "codex-config.toml", client: "codex", stdio: ["docs", "with space", "noargs"], alone: ["figma", "number"] },
  { fixture: "gemini-settings.json", client: "gemini", stdio: ["pythonTools"], alone: ["httpServer", "sseServer"] },
];

function setup(fixture: string): { dir: string; file: string; state: string; original: Buffer } {
  const dir = tempDir("mcp-wiretap-wrap-");
  const file = path.join(dir, fixture);
  copyFileSync(path.join(FIXTURES, fixture), file);
  chmodSync(file, 0o640);
  return { dir, file, state: path.join(dir, "state"), original: readFileSync(file) };
}

async function run(action: "wrap" | "unwrap", file: string, client: ClientId, state: string, extra: Partial<WrapRun> = {}): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runWrap(
    { action, servers: [], client, config: file, dryRun: false, launcher: LAUNCHER, stateDir: state, platform: { platform: "linux", env: {}, home: "/nowhere", cwd: "/" }, ...extra },
    (l) => lines.push(l),
  );
  return { code, out: lines.join("\n") };
}

const launches = (file: string, client: ClientId) =>
  new Map(findEntries(readFileSync(file, "utf8"), locationOfFile(file, client)).entries.map((e) => [e.name, { kind: e.kind, command: e.command, args: e.args }]));

describe("wrap and unwrap round-trip on each client's config", () => {
  for (const c of CASES) {
    it(`${c.client}: ${c.fixture}`, async () => {
      const { dir, file, state, original } = setup(c.fixture);
      const before = launches(file, c.client);
      const wrapped = await run("wrap", file, c.client, state);
      expect(wrapped.code, wrapped.out).toBe(0);
      expect(wrapped.out).toContain(": changed");
      const after = launches(file, c.client);
      for (const name of c.stdio) {
        const was = before.get(name)!;
        expect(after.get(name), name).toEqual({ kind: "wrapped", command: LAUNCHER.command, args: [...LAUNCHER.prefix, "stdio", "--name", name, "--", was.command, ...was.args!] });
      }
      for (const name of c.alone) expect(after.get(name), name).toEqual(before.get(name));
      // Mode kept; a private backup of the original, byte for byte.
      expect(statSync(file).mode & 0o777).toBe(0o640);
      const backup = file + ".mcp-wiretap-backup";
      expect(readFileSync(backup)).toEqual(original);
      expect(statSync(backup).mode & 0o777).toBe(0o600);

      // Idempotent: a second wrap changes nothing.
      const once = readFileSync(file);
      const again = await run("wrap", file, c.client, state);
      expect(again.out).toContain(": unchanged");
      expect(again.out).toContain("already wrapped");
      expect(readFileSync(file)).toEqual(once);

      const unwrapped = await run("unwrap", file, c.client, state);
      expect(unwrapped.code, unwrapped.out).toBe(0);
      expect(readFileSync(file)).toEqual(original);
      expect(statSync(file).mode & 0o777).toBe(0o640);
      // Nothing left behind: the backup and the state are done with.
      expect(existsSync(backup)).toBe(false);
      expect(existsSync(path.join(state, "wrapped")) ? readdirSync(path.join(state, "wrapped")) : []).toEqual([]);
      expect(readdirSync(dir).sort()).toEqual([c.fixture, ...(existsSync(state) ? ["state"] : [])].sort());
    });
  }

  it("comments and trailing commas of VS Code's JSONC stay where they were while wrapped", async () => {
    const { file, state } = setup("vscode-mcp.json");
    await run("wrap", file, "vscode", state);
    const text = readFileSync(file, "utf8");
    for (const comment of ["// VS Code workspace MCP servers", "/* the Playwright server */", "// from PATH", '"envFile": "${workspaceFolder}/.env",\n    },'])
      expect(text).toContain(comment);
  });

  it("the TOML of Codex: a string in a multi-line string that looks like a server is not one", async () => {
    const { file, state } = setup("codex-config.toml");
    const r = await run("wrap", file, "codex", state);
    expect(r.out).not.toContain("fake");
    expect(r.out).toMatch(/dotted[^\n]*left alone/);
    expect(readFileSync(file, "utf8")).toContain('[mcp_servers.fake]\ncommand = "not a server"');
  });

  it("names given: only those entries change; a name found nowhere is an error", async () => {
    const { file, state, original } = setup("claude_desktop_config.json");
    const r = await run("wrap", file, "claude-desktop", state, { servers: ["github"] });
    expect(r.code).toBe(0);
    const after = launches(file, "claude-desktop");
    expect(after.get("github")!.kind).toBe("wrapped");
    expect(after.get("filesystem")!.kind).toBe("stdio");
    const missing = await run("wrap", file, "claude-desktop", state, { servers: ["nope"] });
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('no server named "nope"');
    await run("unwrap", file, "claude-desktop", state);
    expect(readFileSync(file)).toEqual(original);
  });

  it("--dry-run prints the diff and writes nothing", async () => {
    const { dir, file, state, original } = setup("cursor-mcp.json");
    const r = await run("wrap", file, "cursor", state, { dryRun: true });
    expect(r.out).toContain("would change");
    expect(r.out).toContain(`-\t\t\t"command": "npx",`);
    expect(r.out).toContain(`+\t\t\t"command": "/opt/node/bin/node",`);
    expect(r.out).toMatch(/^@@ -1,\d+ \+1,\d+ @@$/m);
    expect(readFileSync(file)).toEqual(original);
    expect(readdirSync(dir)).toEqual(["cursor-mcp.json"]);
  });

  it("without the state file, unwrap still restores each entry's command and args", async () => {
    const { file, state } = setup("claude_desktop_config.json");
    const before = launches(file, "claude-desktop");
    await run("wrap", file, "claude-desktop", state);
    rmSync(state, { recursive: true });
    const r = await run("unwrap", file, "claude-desktop", state);
    expect(r.out).toContain("no record of the entry as it was");
    expect(launches(file, "claude-desktop")).toEqual(before);
  });

  it("an entry edited while wrapped keeps the edit on unwrap", async () => {
    const { file, state } = setup("claude_desktop_config.json");
    await run("wrap", file, "claude-desktop", state);
    writeFileSync(file, readFileSync(file, "utf8").replace('"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_exampleexampleexample"', '"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_new"'));
    const r = await run("unwrap", file, "claude-desktop", state);
    expect(r.out).toContain("the entry changed after it was wrapped");
    const text = readFileSync(file, "utf8");
    expect(text).toContain('"ghp_new"');
    expect(launches(file, "claude-desktop").get("github")!.kind).toBe("stdio");
  });
});

describe("a config with servers of every shape", () => {
  it("wraps the stdio ones (disabled too), leaves URL servers and unknown shapes alone with a note, and unwraps to the same bytes", async () => {
    const { file, state, original } = setup("every-shape.json");
    const r = await run("wrap", file, "cursor", state);
    const lines = r.out.split("\n").map((l) => l.trim());
    expect(lines).toEqual(
      expect.arrayContaining([
        "stdio: wrapped",
        "disabled: wrapped (disabled in the client: stays disabled)",
        expect.stringMatching(/^http: left alone \(a remote server .*--remote routes it through mcp-wiretap bridge\)$/),
        expect.stringMatching(/^sse: left alone \(a remote server .*--remote routes it through mcp-wiretap bridge\)$/),
        "no-command: left alone (no command to launch)",
        "number-command: left alone (no command to launch)",
        "bad-args: left alone (args is not a list of strings)",
        'websocket: left alone (type "ws" is not stdio)',
        "not-an-object: left alone (not an object)",
        "wiretap-logs: left alone (mcp-wiretap's own MCP server over the logs: it carries no traffic to record)",
        "wiretap-logs-node: left alone (mcp-wiretap's own MCP server over the logs: it carries no traffic to record)",
        'note: server "twice" appears twice in "mcpServers": left alone',
      ]),
    );
    const after = launches(file, "cursor");
    expect([...after].filter(([, e]) => e.kind === "wrapped").map(([name]) => name)).toEqual(["stdio", "disabled"]);
    expect(readFileSync(file, "utf8")).toContain('"disabled": { "command": "/opt/node/bin/node", "args": ["/opt/mcp-wiretap/dist/cli/main.js", "stdio", "--name", "disabled", "--", "off"], "disabled": true }');
    await run("unwrap", file, "cursor", state);
    expect(readFileSync(file)).toEqual(original);
  });
});
