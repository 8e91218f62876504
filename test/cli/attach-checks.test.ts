/**
 * `run --proxy` and `env` point clients at a proxy that is already running: they check it answers and that
 * the CA clients will trust is the one it signs with, and say which CA that is. Needs `npm run build`.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateCa } from "../../src/ca/index.js";
import { closedPort, NODE_BIN, runCli, spawnCli, type SpawnedCli } from "../helpers/proxy-harness.js";

describe("checking the proxy clients are pointed at", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-attach-"));
  const caDir = path.join(dir, "ca");
  let cli: SpawnedCli;
  let url: string;
  let fingerprint: string;

  beforeAll(async () => {
    cli = spawnCli(["start", "--port", "0", "--ca-dir", caDir, "--log-file", path.join(dir, "log.ndjson")]);
    [, url] = (await cli.waitForStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 20_000)) as [string, string];
    fingerprint = (await loadOrCreateCa(caDir)).info().fingerprint256;
  });
  afterAll(async () => {
    cli?.kill();
    await cli?.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  it("run --proxy says which CA the client trusts when it is the proxy's", async () => {
    const ok = await runCli(["run", "--proxy", url, "--ca-dir", caDir, "--", NODE_BIN, "-e", "0"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain(`the proxy at ${url} signs with the CA clients trust: ${path.join(caDir, "ca.pem")} (SHA-256 ${fingerprint})`);
  });

  it("run --proxy refuses a CA folder the proxy does not use, naming both CAs, and runs nothing", async () => {
    const other = path.join(dir, "other-ca");
    const otherFingerprint = (await loadOrCreateCa(other)).info().fingerprint256;
    const marker = path.join(dir, "ran");
    const refused = await runCli(["run", "--proxy", url, "--ca-dir", other, "--", NODE_BIN, "-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the proxy at ${url} signs with another CA (SHA-256 ${fingerprint}) than ${path.join(other, "ca.pem")} (SHA-256 ${otherFingerprint})`);
    expect(refused.stderr).toMatch(/give --ca-dir the folder that proxy was started with/);
    expect(existsSync(marker)).toBe(false);
  });

  it("run --proxy with nothing listening, or a missing CA folder, is refused before the command runs", async () => {
    const nobody = `http://127.0.0.1:${await closedPort()}`;
    const down = await runCli(["run", "--proxy", nobody, "--ca-dir", caDir, "--", NODE_BIN, "-e", "0"]);
    expect(down.code).toBe(2);
    expect(down.stderr).toContain(`nothing answers at ${nobody} (ECONNREFUSED); start it first (mcp-wiretap start), or leave out --proxy and run starts its own`);
    const missing = path.join(dir, "no-such-ca");
    const noCa = await runCli(["run", "--proxy", url, "--ca-dir", missing, "--", NODE_BIN, "-e", "0"]);
    expect(noCa.code).toBe(2);
    expect(noCa.stderr).toContain(`${missing} holds no CA (ca.pem)`);
    expect(existsSync(missing)).toBe(false);
  });

  it("env refuses a missing CA folder unless --create-ca, and warns when nothing listens at --proxy", async () => {
    const missing = path.join(dir, "env-ca");
    const refused = await runCli(["env", "--proxy", url, "--ca-dir", missing]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`${missing} holds no CA (ca.pem)`);
    expect(refused.stderr).toContain("--create-ca");
    expect(existsSync(missing)).toBe(false);

    const nobody = `http://127.0.0.1:${await closedPort()}`;
    const created = await runCli(["env", "--proxy", nobody, "--ca-dir", missing, "--create-ca"]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain(`export NODE_EXTRA_CA_CERTS='${path.join(missing, "ca.pem")}'`);
    expect(created.stderr).toContain(`created a new CA in ${missing}`);
    expect(created.stderr).toContain(`warning: nothing answers at ${nobody} (ECONNREFUSED)`);

    const wrong = await runCli(["env", "--proxy", url, "--ca-dir", missing]);
    expect(wrong.code, wrong.stderr).toBe(0);
    expect(wrong.stderr).toContain(`warning: the proxy at ${url} signs with another CA (SHA-256 ${fingerprint})`);
    const right = await runCli(["env", "--proxy", url, "--ca-dir", caDir]);
    expect(right.code, right.stderr).toBe(0);
    expect(right.stderr).toBe("");
  });
});
