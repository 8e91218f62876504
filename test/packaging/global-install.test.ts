/**
 * The newcomer's install, as the README gives it: `npm pack`, then `npm install -g ./mcp-wiretap-*.tgz`
 * into a temporary prefix, then `mcp-wiretap start` from that prefix's bin, on the project's Node 24, on
 * the oldest Node 22 that `engines` allows and on the newest 22 (the `node` package from the registry,
 * installed into another temporary prefix). Needs
 * `npm run build` and the registry; a part that cannot get what it needs from the registry is skipped,
 * saying so.
 */
import { execFile, spawn } from "node:child_process";
import { readFileSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, NODE_BIN, REPO_ROOT } from "../helpers/proxy-harness.js";

const PACKAGE = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string; engines: { node: string } };
const VERSION = PACKAGE.version;
/** `engines.node` is `>=X.Y`: the oldest Node the package accepts, as an npm version range (X.Y.x). */
const MINIMUM = PACKAGE.engines.node.replace(/^>=\s*/, "");

interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Exec> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** An environment whose `node` (for npm and for the installed bin's shebang) is `node`. */
async function envWithNode(dir: string, node: string): Promise<NodeJS.ProcessEnv> {
  const bin = path.join(dir, "node-bin");
  await mkdir(bin, { recursive: true });
  await symlink(realpathSync(node), path.join(bin, "node"));
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, npm_config_update_notifier: "false" };
  for (const name of ["NODE_OPTIONS", "NODE_USE_ENV_PROXY", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "npm_config_prefix"]) delete env[name];
  return env;
}

/** `mcp-wiretap start --port 0` until its banner names the port, then SIGINT; the clean exit code. */
function startAndStop(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ banner: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ["start", "--port", "0", ...args], { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no banner within 20 s; stderr:\n${stderr}`));
    }, 20_000);
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/listening on http:\/\/127\.0\.0\.1:\d+/.test(stderr)) child.kill("SIGINT");
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ banner: stderr, code });
    });
  });
}

describe("global install of the packed tarball", () => {
  let tmp: string;
  let tarball: string;
  let registry: string | null = null;

  beforeAll(async () => {
    assertBuilt();
    tmp = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-global-test-"));
    const env = await envWithNode(path.join(tmp, "pack"), NODE_BIN);
    const packed = await run("npm", ["pack", "--json", "--pack-destination", tmp], REPO_ROOT, env);
    if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
    tarball = path.join(tmp, (JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as { filename: string }[])[0]!.filename);
    const ping = await run("npm", ["ping"], tmp, env, 20_000);
    if (ping.code !== 0) registry = `npm cannot reach the registry (npm ping: ${(ping.stderr || ping.stdout).trim().split("\n").at(-1) ?? "no answer"})`;
  }, 60_000);

  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function installAndStart(label: string, node: string): Promise<void> {
    const dir = path.join(tmp, label);
    const env = await envWithNode(dir, node);
    const prefix = path.join(dir, "prefix");
    const install = await run("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", "--prefer-offline", tarball], dir, env, 90_000);
    expect(install.code, install.stderr).toBe(0);
    // Dependencies may want a newer Node than the floor (undici: 22.19); the package itself must not.
    expect(install.stderr).not.toMatch(/EBADENGINE\s+package: 'mcp-wiretap@/);
    const bin = path.join(prefix, "bin", "mcp-wiretap");
    const version = await run(bin, ["--version"], dir, env);
    expect(version.stdout.trim(), version.stderr).toBe(VERSION);

    const caDir = path.join(dir, "ca");
    const started = await startAndStop(bin, ["--ca-dir", caDir, "--log-file", path.join(dir, "mcp.ndjson")], env, dir);
    expect(started.banner).toMatch(/^mcp-wiretap listening on http:\/\/127\.0\.0\.1:\d+$/m);
    expect(started.banner).toContain(`CA certificate: ${path.join(caDir, "ca.pem")} (created now)`);
    expect(started.banner).not.toMatch(/TypeError|Error:/);
    expect(started.code).toBe(0);
    const shown = await run(bin, ["ca", "show", "--ca-dir", caDir], dir, env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/SHA-256/i);
  }

  it("installs with -g and starts on the project's Node 24", { timeout: 120_000 }, async (ctx) => {
    if (registry) {
      console.warn(`SKIPPED the global install on Node 24: ${registry}`);
      ctx.skip(registry);
    }
    await installAndStart("node24", NODE_BIN);
  });

  // The oldest Node that package.json allows, and the newest 22.
  it.for([MINIMUM, "22"])("installs with -g and starts on Node %s", { timeout: 120_000 }, async (version, ctx) => {
    if (registry) {
      console.warn(`SKIPPED the global install on Node ${version}: ${registry}`);
      ctx.skip(registry);
    }
    const nodePrefix = path.join(tmp, `node-${version}-runtime`);
    const env = await envWithNode(path.join(tmp, `node-${version}-installer`), NODE_BIN);
    const got = await run("npm", ["install", "--prefix", nodePrefix, "--no-save", "--no-audit", "--no-fund", "--prefer-offline", `node@${version}`], tmp, env, 60_000);
    const node = path.join(nodePrefix, "node_modules", ".bin", "node");
    const found = got.code === 0 ? await run(node, ["--version"], tmp, env, 10_000) : null;
    if (!found || found.code !== 0 || !found.stdout.startsWith(`v${version}`)) {
      const reason = `could not install node@${version} from the registry (${(got.stderr || found?.stderr || "").trim().split("\n").at(-1) ?? "no answer"})`;
      console.warn(`SKIPPED the global install on Node ${version}: ${reason}`);
      ctx.skip(reason);
      return;
    }
    await installAndStart(`node-${version}`, node);
  });
});
