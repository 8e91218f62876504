/**
 * Command-line mistakes a newcomer makes, and the next step each message gives: a misremembered option,
 * a command for `run` written without `--`, a port that is taken. Runs the built CLI (`npm run build`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_BIN, runCli } from "../helpers/proxy-harness.js";

describe("command-line hints", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-hints-test-"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("`start --log x.ndjson` suggests --log-file", async () => {
    const result = await runCli(["start", "--log", "x.ndjson"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--log'");
    expect(result.stderr).toMatch(/Did you mean --log-file\b/);
    expect(result.stderr).not.toContain("--keylog");
  });

  it("a misspelt option still gets the closest one", async () => {
    const result = await runCli(["start", "--insecure-upstrem"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Did you mean --insecure-upstream\?/);
  });

  it("`run CMD -x ...` without `--` runs the command with its own options", async () => {
    const result = await runCli(["run", "--ca-dir", path.join(dir, "ca"), NODE_BIN, "-e", "console.log('ran with ' + process.argv.length)"]);
    expect(result.stderr).not.toContain("unknown option");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("ran with 1\n");
  });

  it("an unknown option before run's command says to put -- before the command", async () => {
    const result = await runCli(["run", "-c", "print(1)", "python3"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '-c'");
    expect(result.stderr).toMatch(/put -- before the command: mcp-wiretap run \[options\] -- <command>/);
  });

  it("the program's --version still works after a command (`start --version`)", async () => {
    const result = await runCli(["start", "--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("a port in use suggests --port 0 or another port", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const result = await runCli(["start", "--port", String(port), "--ca-dir", path.join(dir, "ca"), "--log-file", path.join(dir, "log.ndjson")]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("EADDRINUSE");
      expect(result.stderr).toContain(`port ${port}`);
      expect(result.stderr).toMatch(/--port 0\b/);
      expect(result.stderr).toMatch(new RegExp(`--port ${port + 1}\\b`));
    } finally {
      taken.close();
    }
  });
});
