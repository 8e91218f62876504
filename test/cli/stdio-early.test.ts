/**
 * `stdio` starts its server before it parses its command line (cli/stdio-early.ts): a command line it then
 * refuses stops that server, and one whose command the parser reads otherwise runs the parser's command.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, NODE_BIN, REPO_ROOT } from "../helpers/proxy-harness.js";
import { records, tempDir } from "../helpers/stdio-shim.js";
import { waitUntil } from "../helpers/wait-until.js";
import { processesWith } from "../helpers/processes.js";

const dir = tempDir();

function stdio(args: string[]): { out: () => string; err: () => string; send(line: string): void; end(): void; exited: Promise<number | null> } {
  const child = spawn(NODE_BIN, [CLI_MAIN, "stdio", "--ca-dir", path.join(dir, "pins"), ...args], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return {
    out: () => out,
    err: () => err,
    send: (line) => child.stdin.write(line),
    end: () => child.stdin.end(),
    exited: new Promise((resolve) => child.once("close", (code) => resolve(code))),
  };
}

const ECHO = "process.stdin.on('data', (d) => process.stdout.write(d))";

describe.skipIf(process.platform !== "linux")("stdio: the server started before the command line is parsed", () => {
  it("a refused command line stops it: exit 2, the parser's message, no server left running", async () => {
    const token = `early-refused-${process.pid}`;
    const s = stdio(["--no-such-option", "--", NODE_BIN, "-e", "setInterval(() => {}, 1000)", token]);
    expect(await s.exited).toBe(2);
    expect(s.err()).toMatch(/unknown option '--no-such-option'/);
    expect(s.out()).toBe("");
    // Stopped at our exit, or never started: either way gone, where a server left behind would run on.
    await waitUntil(() => processesWith(token).length === 0, { timeoutMs: 5_000, what: "the early server to be gone" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(processesWith(token)).toEqual([]);
  });

  it("a command the parser reads otherwise (an option's value is `--`) runs the parser's command, recorded as such", async () => {
    const file = path.join(dir, "otherwise.ndjson");
    const s = stdio(["--log-file", file, "--name", "--", "--", NODE_BIN, "-e", ECHO]);
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
    s.send(ping);
    await waitUntil(() => s.out() === ping, { timeoutMs: 10_000, what: "the echo" });
    s.end();
    expect(await s.exited).toBe(0);
    const all = await records(file);
    expect(all.find((r) => r.event === "start")).toMatchObject({ server: "stdio:--", command: [NODE_BIN, "-e", ECHO] });
    expect(all.filter((r) => r.event === "rpc").map((r) => r.method)).toContain("ping");
  });
});
