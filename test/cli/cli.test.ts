/**
 * The built CLI (`dist/cli/main.js`) as a user runs it. `npm test` builds first; when running vitest
 * directly, run `npm run build` before.
 */
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { REPO_ROOT, runCli, spawnCli, testCaFile, type SpawnedCli } from "../helpers/proxy-harness.js";

const OPENSSL = "/usr/bin/openssl";
const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("mcp-wiretap CLI", () => {
  let dir: string;
  const running: SpawnedCli[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-cli-test-"));
  });

  afterAll(async () => {
    for (const cli of running) cli.kill();
    await Promise.all(running.map((cli) => cli.exited));
    await rm(dir, { recursive: true, force: true });
  });

  // Independent child processes: run side by side.
  describe.concurrent("usage", () => {
    it.concurrent("--version prints the package version", async ({ expect }) => {
      const result = await runCli(["--version"]);
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe(VERSION);
    });

    it.concurrent("--help lists the start and ca commands", async ({ expect }) => {
      const [result, startHelp] = await Promise.all([runCli(["--help"]), runCli(["start", "--help"])]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: mcp-wiretap/m);
      expect(result.stdout).toMatch(/^\s+start\b/m);
      expect(result.stdout).toMatch(/^\s+ca\b/m);
      expect(startHelp.code).toBe(0);
      for (const flag of ["--host", "--port", "--ca-dir", "--log-file", "--upstream-ca", "--insecure-upstream", "--passthrough", "--grace"]) {
        expect(startHelp.stdout).toContain(flag);
      }
    });

    it.concurrent("an unknown flag exits 2 with a clear message", async ({ expect }) => {
      const result = await runCli(["--bogus-flag"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/unknown option '--bogus-flag'/);
      expect(result.stderr).toContain("--help");
    });

    it.concurrent("--port abc exits 2 naming the option", async ({ expect }) => {
      const result = await runCli(["start", "--port", "abc", "--ca-dir", path.join(dir, "unused")]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/--port/);
      expect(result.stderr).toMatch(/port number/);
      expect(existsSync(path.join(dir, "unused"))).toBe(false);
    });

    it.concurrent("refuses a non-loopback --host (exit 2), and a missing --upstream-ca file (exit 2)", async ({ expect }) => {
      const [host, trust] = await Promise.all([
        runCli(["start", "--host", "0.0.0.0", "--port", "0", "--ca-dir", path.join(dir, "ca-host")]),
        runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca-trust"), "--upstream-ca", path.join(dir, "nope.pem")]),
      ]);
      expect(host.code).toBe(2);
      expect(host.stderr).toMatch(/127\.0\.0\.1/);
      expect(trust.code).toBe(2);
      expect(trust.stderr).toMatch(/--upstream-ca .*nope\.pem: cannot read it/);
    });
  });

  it("ca path prints the absolute path of the CA certificate and creates the key 0600", async () => {
    const caDir = path.join(dir, "ca");
    const result = await runCli(["ca", "path", "--ca-dir", caDir]);
    expect(result.code).toBe(0);
    const certPath = result.stdout.trim();
    expect(path.isAbsolute(certPath)).toBe(true);
    expect(certPath).toBe(path.join(caDir, "ca.pem"));
    expect(existsSync(certPath)).toBe(true);
    expect(new X509Certificate(readFileSync(certPath)).ca).toBe(true);
    expect(statSync(path.join(caDir, "ca-key.pem")).mode & 0o777).toBe(0o600);
    expect(statSync(caDir).mode & 0o777).toBe(0o700);
    // A second run finds the same CA.
    const again = await runCli(["ca", "path", "--ca-dir", caDir]);
    expect(again.stdout.trim()).toBe(certPath);
  });

  it("ca show prints subject, validity and a SHA-256 fingerprint that matches the file", async () => {
    const caDir = path.join(dir, "ca");
    const [result, json] = await Promise.all([
      runCli(["ca", "show", "--ca-dir", caDir]),
      runCli(["ca", "show", "--json", "--ca-dir", caDir]),
    ]);
    expect(result.code).toBe(0);
    const cert = new X509Certificate(readFileSync(path.join(caDir, "ca.pem")));
    const field = (name: string) => new RegExp(`^${name}:\\s+(.+)$`, "m").exec(result.stdout)?.[1];
    expect(field("SHA-256")).toBe(cert.fingerprint256);
    expect(field("Subject")).toBeTruthy();
    expect(cert.subject).toContain(String(field("Subject")).split(",")[0]!.replace(/^CN=/, ""));
    expect(new Date(field("Not before")!).getTime()).toBe(new Date(cert.validFrom).getTime());
    expect(new Date(field("Not after")!).getTime()).toBe(new Date(cert.validTo).getTime());

    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ fingerprint256: cert.fingerprint256, certPath: path.join(caDir, "ca.pem") });

    if (existsSync(OPENSSL)) {
      const openssl = await new Promise<string>((resolve, reject) =>
        execFile(OPENSSL, ["x509", "-noout", "-fingerprint", "-sha256", "-in", path.join(caDir, "ca.pem")], (err, out) =>
          err ? reject(err) : resolve(String(out)),
        ),
      );
      expect(openssl.trim().split("=")[1]?.toUpperCase()).toBe(field("SHA-256")?.toUpperCase());
    }
  });

  describe("start", () => {
    let upstream: TestUpstream;

    beforeAll(async () => {
      upstream = await startHttpsUpstream();
    });

    afterAll(async () => {
      await upstream?.close();
    });

    async function start(name: string, extra: string[] = []) {
      const caDir = path.join(dir, "ca");
      const logFile = path.join(dir, `${name}.ndjson`);
      const cli = spawnCli(["start", "--port", "0", "--ca-dir", caDir, "--log-file", logFile, "--upstream-ca", testCaFile(), ...extra]);
      running.push(cli);
      const [, url] = await cli.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      await cli.waitForStderr(/^\s*export HTTPS_PROXY=.*$/m);
      return { cli, url: url!, caDir, logFile, caPem: await readFile(path.join(caDir, "ca.pem"), "utf8") };
    }

    async function parsedLog(logFile: string): Promise<Record<string, unknown>[]> {
      const text = await readFile(logFile, "utf8");
      expect(text.endsWith("\n")).toBe(true);
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    }

    it("prints a banner with the real address and CA path, serves, and exits 0 on SIGTERM with a complete log", async () => {
      const { cli, url, caDir, logFile, caPem } = await start("plain");
      const exportsLines = cli.stderr().split("\n").map((l) => l.trim());
      expect(exportsLines).toContain(`export HTTPS_PROXY='${url}'`);
      expect(exportsLines).toContain(`export HTTP_PROXY='${url}'`);
      expect(exportsLines).toContain(`export NODE_EXTRA_CA_CERTS='${path.join(caDir, "ca.pem")}'`);
      expect(cli.stderr()).toContain(`logs: ${logFile}`);
      expect(cli.stdout()).toBe("");

      const agent = new ProxyAgent({ uri: url, requestTls: { ca: caPem } });
      try {
        const res = await fetch(`${upstream.url}/bytes?n=1234`, { dispatcher: agent });
        expect(res.status).toBe(200);
        expect((await res.arrayBuffer()).byteLength).toBe(1234);
      } finally {
        await agent.close();
      }

      cli.child.kill("SIGTERM");
      expect(await cli.exited).toEqual({ code: 0, signal: null });
      const records = await parsedLog(logFile);
      expect(records[0]).toMatchObject({ event: "start", listen: url.replace("http://", "") });
      expect(records.some((r) => r.event === "http" && r.path === "/bytes?n=1234" && r.status === 200)).toBe(true);
      expect(records.at(-1)).toMatchObject({ event: "stop", reason: "SIGTERM" });
      expect(statSync(logFile).mode & 0o777).toBe(0o600);
    });

    it("exits 0 within the grace period on SIGTERM while an SSE stream is open through it", async () => {
      const graceMs = 1000;
      const { cli, url, logFile, caPem } = await start("sse", ["--grace", String(graceMs)]);
      const agent = new ProxyAgent({ uri: url, requestTls: { ca: caPem } });
      try {
        const res = await fetch(`${upstream.url}/sse-forever?interval=50`, { dispatcher: agent });
        const reader = res.body!.getReader();
        const first = await reader.read();
        expect(Buffer.from(first.value ?? []).toString()).toMatch(/^id: 1\n/);
        expect(upstream.openSseStreams).toBe(1);

        const signalled = Date.now();
        cli.child.kill("SIGTERM");
        // The stream breaks off (or ends) for the client once the grace period is over.
        const drained = (async () => {
          for (;;) if ((await reader.read()).done) return;
        })().catch(() => undefined);
        expect(await cli.exited).toEqual({ code: 0, signal: null });
        // Coarse: well under the grace period plus a generous margin for a busy machine.
        expect(Date.now() - signalled).toBeLessThan(graceMs + 5_000);
        await drained;
      } finally {
        await agent.destroy();
      }
      const records = await parsedLog(logFile);
      const stop = records.find((r) => r.event === "stop");
      expect(stop).toMatchObject({ reason: "SIGTERM" });
      // The cut-off stream is on the record (logged before "stop": the process exits right after), saying why.
      // (Its line may follow the stop line: the sink's flush at stop can overtake a write in flight — report.)
      const stream = records.find((r) => r.event === "http" && String(r.path).startsWith("/sse-forever"));
      expect(stream).toMatchObject({ status: 200, error: { code: "shutdown" } });
      expect(Date.parse(String(stream!.time))).toBeLessThanOrEqual(Date.parse(String(stop!.time)));
    });
  });
});
