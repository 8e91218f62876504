/**
 * What a client relies on from the process it launched: exit codes, signals passed on, stdin closing,
 * no TTY and a minimal PATH, and the per-user log folder when no --log-file is given.
 */
import { spawn } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, NODE_BIN, REPO_ROOT, runCli } from "../helpers/proxy-harness.js";
import { records, tempDir } from "../helpers/stdio-shim.js";
import { waitUntil } from "../helpers/wait-until.js";
import { processesWith } from "../helpers/processes.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

interface Shim {
  stdin: NodeJS.WritableStream;
  out: () => string;
  err: () => string;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<number | null>;
}

/** The shim with no TTY, a PATH that finds nothing, and only the environment given. */
function shim(args: string[], env: NodeJS.ProcessEnv): Shim {
  const child = spawn(NODE_BIN, [CLI_MAIN, "stdio", "--ca-dir", path.join(dir, "pins"), ...args], { cwd: REPO_ROOT, env: { PATH: "/nonexistent", ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return {
    stdin: child.stdin,
    out: () => out,
    err: () => err,
    kill: (s) => child.kill(s),
    exited: new Promise((resolve) => child.once("close", (code) => resolve(code))),
  };
}

const node = (script: string): string[] => ["--", NODE_BIN, "-e", script];
const dir = tempDir();
let n = 0;
const logFile = (): string => path.join(dir, `p${++n}.ndjson`);

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

describe("stdio: process behaviour", () => {
  it("a command that is not found: a clear line on stderr, a record, exit 127", async () => {
    const file = logFile();
    const key = ["AKIA", "IOSFODNN7", "EXAMPLE"].join("");
    const s = shim(["--log-file", file, "--", "no-such-mcp-server-here", "--aws-key", key, "--token=hunter22hunter22"], {});
    s.stdin.end();
    expect(await s.exited).toBe(127);
    expect(s.err()).toMatch(/^mcp-wiretap: no-such-mcp-server-here: not found/m);
    expect(s.out()).toBe("");
    const all = await records(file);
    expect(all.find((r) => r.event === "spawn_error")).toMatchObject({ code: "ENOENT", command: "no-such-mcp-server-here" });
    expect(all.at(-1)).toMatchObject({ event: "stop", exitCode: 127 });
    // The command line is recorded with its secrets redacted.
    expect(all.find((r) => r.event === "start")!.command).toEqual(["no-such-mcp-server-here", "--aws-key", "[redacted: aws_access_key_id]", "--token=[redacted]"]);
    expect(JSON.stringify(all)).not.toContain(key);
    expect(JSON.stringify(all)).not.toContain("hunter22");
    expectRecordsMatchSchemas(all, "start", "spawn_error", "stop");
  });

  it("exits with the server's exit code; closing stdin closes the server's", async () => {
    const s = shim(["--log-file", logFile(), ...node("process.stdin.resume(); process.stdin.on('end', () => process.exit(7))")], {});
    s.stdin.end();
    expect(await s.exited).toBe(7);
  });

  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    it(`passes ${signal} on and exits 128+n; the server is gone`, async () => {
      const file = logFile();
      const s = shim(["--log-file", file, ...node("process.stdout.write('ready\\n'); setInterval(() => {}, 1000)")], {});
      await waitUntil(() => s.out().includes("ready"), { timeoutMs: 10_000, what: "server start" });
      s.kill(signal);
      const code = await s.exited;
      expect(code).toBe(128 + { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 }[signal]);
      const all = await records(file);
      const pid = all.find((r) => r.event === "start")!.pid as number;
      expect(gone(pid)).toBe(true);
      expect(all.at(-1)).toMatchObject({ event: "stop", reason: `server exited on ${signal}` });
      expectRecordsMatchSchemas(all, "start", "stop");
    });
  }

  it("with no TTY, a minimal PATH and no --log-file: answers pass, records go to a private file in $XDG_STATE_HOME/mcp-wiretap", async () => {
    const state = path.join(dir, "state");
    const s = shim(["--name", "pinger", ...node("process.stdin.on('data', (d) => process.stdout.write(d))")], { XDG_STATE_HOME: state, HOME: dir });
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    s.stdin.write(ping);
    await waitUntil(() => s.out() === ping, { timeoutMs: 10_000, what: "the echo" });
    s.stdin.end();
    expect(await s.exited).toBe(0);
    const folder = path.join(state, "mcp-wiretap");
    expect(lstatSync(folder).mode & 0o777).toBe(0o700);
    const files = readdirSync(folder);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z-pinger-\d+\.ndjson$/);
    const file = path.join(folder, files[0]!);
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    const all = await records(file);
    expect(all.filter((r) => r.event === "rpc").map((r) => `${String(r.direction)} ${String(r.kind)} ${String(r.method)}`)).toEqual([
      "client_to_server request ping",
      // The echoed line is a request too, from the server's side; neither is answered before the end.
      "server_to_client request ping",
      "client_to_server unanswered ping",
      "server_to_client unanswered ping",
    ]);
    // tail --stdio-logs finds it.
    const tail = await runCli(["tail", "--stdio-logs", "--json"], { env: { XDG_STATE_HOME: state } });
    expect(tail.code).toBe(0);
    expect(tail.stdout.trim().split("\n").length).toBe(all.length);
    const human = await runCli(["tail", "--stdio-logs"], { env: { XDG_STATE_HOME: state, NO_COLOR: "1" } });
    expect(human.stdout).toMatch(/── stdio:pinger started \(pid \d+\), policy: monitor/);
    expect(human.stdout).toMatch(/request +#1 .* ping/);
    expect(human.stdout).toMatch(/── stdio:pinger stopped \(server exited with code 0\)/);
  });

  // Linux: the server is found by its command line in /proc, whether or not it ran far enough to say its pid.
  it.skipIf(process.platform !== "linux")("a policy file that cannot be read: a clear error, exit 2, and the server already started for it is stopped", async () => {
    // The server starts before the policy loads (cli/stdio-launch.ts); left alone, it would run for a minute.
    const policy = path.join(dir, "broken-policy.yaml");
    writeFileSync(policy, "rules: [\n");
    const token = `server-of-a-broken-policy-${process.pid}`;
    const s = shim(["--log-file", logFile(), "--config", policy, ...node(`setTimeout(() => {}, 60_000) // ${token}`)], {});
    expect(await s.exited).toBe(2);
    expect(s.err()).toMatch(/broken-policy\.yaml:2:1: not valid YAML/);
    await waitUntil(() => processesWith(token).length === 0, { timeoutMs: 10_000, what: "the server to be stopped" });
  });

  it("refuses a log folder that is a planted symlink", async () => {
    const state = path.join(dir, "planted");
    mkdirSync(state);
    mkdirSync(path.join(dir, "elsewhere"));
    symlinkSync(path.join(dir, "elsewhere"), path.join(state, "mcp-wiretap"));
    const s = shim(node("process.exit(0)"), { XDG_STATE_HOME: state, HOME: dir });
    s.stdin.end();
    expect(await s.exited).toBe(2);
    expect(s.err()).toMatch(/log folder .* is not a folder \(a symlink\?\)/);
    expect(readdirSync(path.join(dir, "elsewhere"))).toEqual([]);
  });

  it("refuses a --ca-dir (where the pins go) that other users can write to, and leaves its mode alone", async () => {
    const shared = path.join(dir, "shared");
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const s = shim(["--ca-dir", shared, "--log-file", logFile(), ...node("process.exit(0)")], {});
    s.stdin.end();
    expect(await s.exited).toBe(2);
    expect(s.err()).toMatch(/other users can write to it/);
    expect(statSync(shared).mode & 0o777).toBe(0o777);
    expect(readdirSync(shared)).toEqual([]);
  });
});
