/**
 * What a newcomer read that sent them the wrong way: each message says what is true and what to do next.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NODE_BIN, readRecords, REPO_ROOT, runCli, spawnCli, type LogRecord } from "../helpers/proxy-harness.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-newcomer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
async function waitForRecord(file: string, match: (r: LogRecord) => boolean): Promise<LogRecord> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const found = (await readRecords(file)).find(match);
    if (found) return found;
  }
  throw new Error(`no such record in ${file}`);
}
const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "session.ndjson");

describe("--ca-dir naming a file", () => {
  it("start and stdio say it is not a folder (not ENOTDIR from a file inside it)", async () => {
    const file = path.join(dir, "pins.json");
    writeFileSync(file, "{}\n");
    for (const args of [
      ["start", "--port", "0", "--ca-dir", file],
      ["stdio", "--ca-dir", file, "--", NODE_BIN, "-e", "0"],
    ]) {
      const result = await runCli(args);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/--ca-dir <dir>' argument '.*pins\.json' is invalid\. is a file, not a folder: give the folder that holds ca\.pem/);
      expect(result.stderr).not.toMatch(/ENOTDIR/);
    }
  });
});

describe("--mode and the policy file", () => {
  it("start --mode enforce overrides the file's mode, and the banner says where it came from", async () => {
    const cli = spawnCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--log-file", path.join(dir, "mode.ndjson"), "--mode", "enforce"]);
    try {
      await cli.waitForStderr(/listening on/, 20_000);
      await cli.waitForStderr(/policy: .*policy\.yaml \(enforce, from --mode\)/, 5_000);
      const start = await waitForRecord(path.join(dir, "mode.ndjson"), (r) => r.event === "start");
      expect((start.policy as { mode: string }).mode).toBe("enforce");
    } finally {
      cli.kill();
      await cli.exited;
    }
  });

  it("stdio --mode enforce records the launch in enforce mode; a wrong mode is refused with the choices", async () => {
    const log = path.join(dir, "stdio-mode.ndjson");
    const ok = await runCli(["stdio", "--mode", "enforce", "--log-file", log, "--ca-dir", path.join(dir, "pins"), "--", NODE_BIN, "-e", "0"]);
    expect(ok.code).toBe(0);
    expect(readFileSync(log, "utf8")).toMatch(/"event":"start","version":"[^"]+","transport":"stdio".*"policy":\{"file":"[^"]+","mode":"enforce"\}/);
    const wrong = await runCli(["start", "--mode", "block"]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/argument 'block' is invalid\. Allowed choices are monitor, enforce/);
  });

  it("an unknown policy key gets the nearest known one", async () => {
    const policy = path.join(dir, "typo.yaml");
    writeFileSync(policy, "mode: monitor\nrulez: []\nrateLimits:\n  - name: calls\n    limit: 5\n    window: 1m\n    match: { tol: echo }\n");
    const result = await runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--config", policy]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/typo\.yaml:2:1: \(top level\): Unrecognized key: "rulez" \(did you mean rules\?\)/);
    expect(result.stderr).toMatch(/match: Unrecognized key: "tol" \(did you mean tool\?\)/);
  });
});

describe("export says what it found", () => {
  it("a file with no record: exit 1 and why, as tail does", async () => {
    const empty = path.join(dir, "empty.ndjson");
    writeFileSync(empty, "");
    const har = await runCli(["export", "--har", path.join(dir, "out.har"), empty]);
    expect(har.code).toBe(1);
    expect(har.stderr).toMatch(/empty\.ndjson holds no mcp-wiretap record: nothing to export/);
    const html = await runCli(["export", "--html", path.join(dir, "out.html"), empty]);
    expect(html.code).toBe(1);
    expect(html.stderr).toMatch(/no mcp-wiretap record in .*empty\.ndjson matched: nothing to export/);
  });

  it("--har of a stdio log: exit 1, and where to look instead", async () => {
    const log = path.join(dir, "stdio-only.ndjson");
    const ran = await runCli(["stdio", "--log-file", log, "--ca-dir", path.join(dir, "pins"), "--", NODE_BIN, "-e", "console.error('hello')"]);
    expect(ran.code).toBe(0);
    const har = await runCli(["export", "--har", path.join(dir, "stdio.har"), log]);
    expect(har.code).toBe(1);
    expect(har.stderr).toMatch(/no HTTP exchange to export from .*: a stdio log has no HTTP exchanges; `export --html` or `tail` show it/);
  });

  it("a write that fails names the target, not a temporary file beside it", async () => {
    const result = await runCli(["export", "--har", path.join(dir, "no-such-folder", "out.har"), FIXTURE]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/--har .*no-such-folder\/out\.har: cannot write it \(ENOENT\)/);
    expect(result.stderr).not.toMatch(/\.tmp/);
  });
});

describe("tail", () => {
  it("marks a tool result with isError, as check and stats count it", async () => {
    const log = path.join(dir, "is-error.ndjson");
    const base = { level: "info", event: "rpc", flow: "f1", transport: "streamable-http", server: "127.0.0.1:1", session: "s1" };
    writeFileSync(
      log,
      [
        { ...base, time: "2026-11-22T07:35:38.000Z", direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool: "search", bytes: 80 },
        { ...base, time: "2026-11-22T07:35:38.100Z", direction: "server_to_client", kind: "response", id: 1, method: "tools/call", tool: "search", bytes: 90, latencyMs: 100, result: { isError: true, content: [{ type: "text", text: "index offline" }] } },
      ]
        .map((r) => JSON.stringify(r))
        .join("\n") + "\n",
    );
    const result = await runCli(["tail", log]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines.find((l) => l.includes("response"))).toMatch(/✗ isError/);
    expect(lines.find((l) => l.includes("request"))).not.toMatch(/isError/);
  });

  it("says so when a filter matched nothing", async () => {
    const result = await runCli(["tail", "--tool", "no-such-tool", FIXTURE]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/no record of \d+ matched the filters/);
  });
});

describe("the start banner and warnings", () => {
  async function bannerOf(name: string, env?: NodeJS.ProcessEnv): Promise<string> {
    const cli = spawnCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--log-file", path.join(dir, `banner-${name}.ndjson`)], env ? { env } : {});
    try {
      await cli.waitForStderr(/Point an MCP client at it[^\n]*\n/, 20_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return cli.stderr();
    } finally {
      cli.kill();
      await cli.exited;
    }
  }

  it("under npm start in a clone, the env line runs the clone's CLI from any folder", async () => {
    const banner = await bannerOf("npm-start", { npm_lifecycle_event: "start", npm_package_name: "mcp-wiretap" });
    const line = /eval "\$\((cd .* && npx mcp-wiretap env --proxy \S+ --ca-dir \S+)\)"/.exec(banner);
    expect(line).not.toBeNull();
    const env = await promisify(execFile)("sh", ["-c", line![1]!], { cwd: os.tmpdir(), timeout: 60_000 });
    expect(env.stdout).toMatch(/^export HTTPS_PROXY='http:\/\/127\.0\.0\.1:\d+'$/m);
    expect(await bannerOf("installed")).toMatch(/eval "\$\(mcp-wiretap env --proxy/);
  });

  it("an unreachable --state is said on stderr as well when records go to a file", async () => {
    const cli = spawnCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--log-file", path.join(dir, "state.ndjson"), "--state", "redis://127.0.0.1:1"]);
    try {
      await cli.waitForStderr(/WARNING: redis:\/\/127\.0\.0\.1:1: shared state .* unreachable at start/, 20_000);
    } finally {
      cli.kill();
      await cli.exited;
    }
  });
});

describe("a port in use", () => {
  it("--ui-port taken: the advice names --ui-port and a port that is free now", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    // The next port is taken too: the suggestion must skip it.
    const next = net.createServer();
    const nextTaken = await new Promise<boolean>((resolve) => {
      next.once("error", () => resolve(false));
      next.listen(taken + 1, "127.0.0.1", () => resolve(true));
    });
    try {
      const result = await runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--log-file", path.join(dir, "ui-port.ndjson"), "--ui", "--ui-port", String(taken)]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`web UI port ${taken} is in use`));
      const advice = new RegExp(`pick another port: --ui-port (\\d+) \\(free now\\), or --ui-port 0 for any free port`).exec(result.stderr);
      expect(advice).not.toBeNull();
      expect(result.stderr).not.toMatch(/--port \d+/);
      const suggested = Number(advice![1]);
      expect(suggested).toBeGreaterThan(taken);
      if (nextTaken) expect(suggested).not.toBe(taken + 1);
    } finally {
      blocker.close();
      next.close();
    }
  });
});
