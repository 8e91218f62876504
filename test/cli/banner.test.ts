/**
 * The start banner tells a user what to set in their shell: exactly what `mcp-wiretap env` prints for the
 * same proxy and CA (so Python and curl trust the CA too, not only Node), and no such block where it would
 * mislead: under `run`, which sets it for its command, and with `--reverse`, whose clients use the local
 * URLs. Runs the built CLI (`npm run build` first).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { quoteSh } from "../../src/cli/client-env.js";
import { CLI_MAIN, closedPort, curl, hasCurl, NODE_BIN, REPO_ROOT, runCli, spawnCli, type SpawnedCli } from "../helpers/proxy-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { skipNote } from "../helpers/skip-note.js";

const SCRIPT = "/usr/bin/script";
const hasScript = existsSync(SCRIPT);

skipNote(import.meta.url, !hasScript || !hasCurl, "util-linux script (a terminal) or curl is not installed");
describe("the start banner", () => {
  let dir: string;
  const running: SpawnedCli[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-banner-test-"));
  });

  afterAll(async () => {
    for (const cli of running) cli.kill();
    await Promise.all(running.map((cli) => cli.exited));
    await rm(dir, { recursive: true, force: true });
  });

  async function start(name: string, extra: string[] = []): Promise<{ banner: string; url: string; caDir: string }> {
    const caDir = path.join(dir, `${name}-ca`);
    const cli = spawnCli(["start", "--port", "0", "--ca-dir", caDir, "--log-file", path.join(dir, `${name}.ndjson`), ...extra]);
    running.push(cli);
    const [, url] = await cli.waitForStderr(/listening on (http:\/\/\S+)\n/);
    await cli.waitForStderr(/\n\n$|\n$/);
    // The banner is written in one piece; give it a moment to arrive whole.
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { banner: cli.stderr(), url: url!, caDir };
  }

  it("prints the settings `mcp-wiretap env` prints, CA bundle for Python and curl included", async () => {
    const { banner, url, caDir } = await start("plain");
    const env = await runCli(["env", "--proxy", url, "--ca-dir", caDir]);
    expect(env.code, env.stderr).toBe(0);
    const envLines = env.stdout.split("\n").filter((l) => l.startsWith("export "));
    const bannerLines = banner.split("\n").map((l) => l.trim()).filter((l) => l.startsWith("export "));
    expect(bannerLines).toEqual(envLines);
    const bundle = path.join(caDir, "bundle.pem");
    for (const name of ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"]) expect(bannerLines).toContain(`export ${name}='${bundle}'`);
    expect(bannerLines).toContain(`export NODE_EXTRA_CA_CERTS='${path.join(caDir, "ca.pem")}'`);
    expect(bannerLines).toContain(`export HTTPS_PROXY='${url}'`);
    expect(banner).toContain('eval "$(mcp-wiretap env');
  });

  /** `start` on a terminal (a pty from util-linux `script`): what a user at a shell sees. */
  async function startOnTerminal(name: string, extra: string[]): Promise<{ banner: string; url: string; caDir: string; stop(): void }> {
    const caDir = path.join(dir, `${name}-ca`);
    const command = [NODE_BIN, CLI_MAIN, "start", "--port", "0", "--ca-dir", caDir, "--log-file", path.join(dir, `${name}.ndjson`), ...extra].map(quoteSh).join(" ");
    const child = spawn(SCRIPT, ["-qfec", command, "/dev/null"], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString().replace(/\r\n/g, "\n")));
    const stop = (): void => void child.kill("SIGKILL");
    try {
      await waitUntil(() => /or set these[^]*export NODE_OPTIONS='[^\n]*'\n/.test(out), { timeoutMs: 20_000, what: "the banner on the terminal" });
    } catch (err) {
      stop();
      throw new Error(`${(err as Error).message}\n${out}`);
    }
    return { banner: out, url: /listening on (http:\/\/\S+)\n/.exec(out)![1]!, caDir, stop };
  }

  it.skipIf(!hasCurl || !hasScript)("with --proxy-auth, on a terminal the eval and export lines carry the credentials (no 407 following them); the log file never", async () => {
    const { banner, url, caDir, stop } = await startOnTerminal("auth", ["--proxy-auth", "alice:s3cret-pw"]);
    try {
      const authed = url.replace("http://", "http://alice:s3cret-pw@");
      const evalLine = /eval "\$\(mcp-wiretap env (.*)\)"/.exec(banner)?.[1];
      expect(evalLine).toBe(`--proxy ${authed} --ca-dir ${caDir}`);
      const env = await runCli(["env", ...evalLine!.split(" ")]);
      expect(env.code, env.stderr).toBe(0);
      const exports = (text: string) => text.split("\n").map((l) => l.trim()).filter((l) => l.startsWith("export "));
      expect(exports(banner)).toEqual(exports(env.stdout));
      expect(exports(banner)).toContain(`export HTTPS_PROXY='${authed}'`);
      // Following them: the proxy lets the CONNECT through (an unreachable target behind it answers 502).
      const proxyUrl = /export HTTPS_PROXY='([^']+)'/.exec(banner)![1]!;
      const followed = await curl(["-sS", "-o", "/dev/null", "-w", "%{http_connect}", "-x", proxyUrl, "--cacert", path.join(caDir, "ca.pem"), `https://localhost:${await closedPort()}/`]);
      expect(followed.stdout).toBe("200");
      const without = await curl(["-sS", "-o", "/dev/null", "-w", "%{http_connect}", "-x", url, `https://localhost:${await closedPort()}/`]);
      expect(without.stdout).toBe("407");
      expect(await readFile(path.join(dir, "auth.ndjson"), "utf8")).not.toContain("s3cret-pw");
    } finally {
      stop();
    }
  });

  it("with --proxy-auth and stderr not a terminal (a container's log), the password stays out and the banner says how to add it", async () => {
    const { banner } = await start("auth-piped", ["--proxy-auth", "alice:s3cret-pw"]);
    expect(banner).not.toContain("s3cret-pw");
    expect(banner).toMatch(/the proxy wants credentials.*MCP_WIRETAP_PROXY_AUTH/);
  });

  it("under `run` says nothing about pointing a client at the proxy: run does that for its command", async () => {
    const result = await runCli(["run", "--ca-dir", path.join(dir, "run-ca"), "--", NODE_BIN, "-e", "process.exit(0)"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(result.stderr).not.toMatch(/Point an MCP client/i);
    expect(result.stderr).not.toContain("export HTTPS_PROXY");
  });

  it("with --reverse points clients at the local URL, not at HTTPS_PROXY", async () => {
    const { banner } = await start("reverse", ["--reverse", ":0=https://mcp.example.com/mcp"]);
    expect(banner).toMatch(/Reverse mode/);
    expect(banner).toMatch(/http:\/\/127\.0\.0\.1:\d+ → https:\/\/mcp\.example\.com:443\/mcp/);
    expect(banner).not.toMatch(/Point an MCP client/i);
    expect(banner).not.toContain("export HTTPS_PROXY");
  });
});
