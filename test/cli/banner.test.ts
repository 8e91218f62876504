/**
 * The start banner tells a user what to set in their shell: exactly what `mcp-wiretap env` prints for the
 * same proxy and CA (so Python and curl trust the CA too, not only Node), and no such block where it would
 * mislead: under `run`, which sets it for its command, and with `--reverse`, whose clients use the local
 * URLs. Runs the built CLI (`npm run build` first).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_BIN, runCli, spawnCli, type SpawnedCli } from "../helpers/proxy-harness.js";

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
