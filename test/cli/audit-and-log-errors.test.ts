import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { runCli, spawnCli, testCaFile } from "../helpers/proxy-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

let dir: string;
let upstream: TestUpstream;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-"));
  upstream = await startHttpsUpstream();
});
afterAll(async () => {
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Starts the CLI proxy, waits for its banner, returns its URL and a stop function. */
async function startCli(args: string[]) {
  const cli = spawnCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--upstream-ca", testCaFile(), ...args]);
  const url = (await cli.waitForStderr(/listening on (http:\/\/\S+)/, 15_000))[1]!;
  const stop = async (): Promise<number | null> => {
    cli.child.kill("SIGTERM");
    return (await cli.exited).code;
  };
  return { url, stop, stderr: cli.stderr };
}

async function curlThrough(proxyUrl: string, target: string): Promise<{ code: number | null; out: string }> {
  const { execFile } = await import("node:child_process");
  return new Promise((resolve) => {
    // A refused CONNECT shows in %{http_connect}; an answered request in %{http_code}.
    const args = ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{http_connect}", "-x", proxyUrl, "--cacert", path.join(dir, "ca", "ca.pem"), target];
    execFile("curl", args, (err, stdout) => {
      const [code, connect] = stdout.split(" ");
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: code === "000" ? (connect ?? "") : (code ?? "") });
    });
  });
}

describe("--audit-chain and verify-log", () => {
  it("a chained log verifies; an edited copy is caught with its line", async () => {
    const log = path.join(dir, "chained.ndjson");
    const proxy = await startCli(["--log-file", log, "--audit-chain"]);
    for (let i = 0; i < 3; i++) expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    expect(await proxy.stop()).toBe(0);
    const ok = await runCli(["verify-log", log]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok: \d+ records, chain intact, ended with a stop record/);

    const lines = (await readFile(log, "utf8")).trimEnd().split("\n");
    const httpLine = lines.findIndex((l) => l.includes('"event":"http"'));
    lines[httpLine] = lines[httpLine]!.replace(/"status":200/, '"status":404');
    const edited = path.join(dir, "edited.ndjson");
    await writeFile(edited, `${lines.join("\n")}\n`);
    const bad = await runCli(["verify-log", edited]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`${edited}:${httpLine + 1}`);
    expect(bad.stdout).toContain("edited");
  });
});

describe("--on-log-error", () => {
  it("pass (default): a full disk is reported loudly and traffic keeps flowing", async () => {
    const proxy = await startCli(["--log-file", "/dev/full"]);
    expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    await waitUntil(() => proxy.stderr().includes("cannot write log records to /dev/full"), { timeoutMs: 5_000, what: "loud error" });
    expect(proxy.stderr()).toContain("UNRECORDED");
    expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    await proxy.stop();
  });

  it("block: traffic that cannot be recorded is refused with 503, and /healthz says so", async () => {
    const proxy = await startCli(["--log-file", "/dev/full", "--on-log-error", "block"]);
    // The start record is the first write to fail.
    await waitUntil(() => proxy.stderr().includes("new traffic is refused"), { timeoutMs: 5_000, what: "block notice" });
    const seen = upstream.requests.length;
    const refused = await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`);
    expect(refused.out).toBe("503");
    expect(upstream.requests.length).toBe(seen);
    const health = await fetch(`${proxy.url}/healthz`);
    expect(health.status).toBe(503);
    await proxy.stop();
  });

  it("a log file that cannot be opened stops the start with a clear message (exit 2)", async () => {
    const result = await runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--log-file", path.join(dir)]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--log-file .*: cannot write to it \(EISDIR\)/);
  });
});
