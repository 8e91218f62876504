/**
 * Podman as `npm run test:deploy` drives it: every call bounded in time, every failure thrown with podman's
 * own words. scripts/test-deploy.sh sets CONTAINERS_CONF and makes the local base images first.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface Output {
  stdout: string;
  stderr: string;
}

/** Runs a command; throws with its stderr when it fails or outlives `timeoutMs`. */
export async function exec(cmd: string, args: string[], opts: { timeoutMs?: number; cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Output> {
  try {
    const { stdout, stderr } = await run(cmd, args, {
      timeout: opts.timeoutMs ?? 60_000,
      killSignal: "SIGKILL",
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr };
  } catch (err) {
    const e = err as Error & Partial<Output> & { code?: unknown };
    throw new Error(`${cmd} ${args.join(" ")} failed (${String(e.code ?? e.message)}): ${(e.stderr ?? "").slice(-4000)}`);
  }
}

export function podman(args: string[], timeoutMs?: number): Promise<Output> {
  return exec("podman", args, { timeoutMs });
}

/** A name no other run on this machine uses, for containers, volumes and projects. */
export function uniqueName(what: string): string {
  return `mcp-wiretap-${what}-${process.pid}-${Date.now().toString(36)}`;
}

/** Polls until `check` is true; throws with `what()` after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve().then(check).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The image every deploy test runs: the shipped Dockerfile, built once per run by image.deploy.ts. */
export const IMAGE = "localhost/mcp-wiretap:deploy-test";

/**
 * `podman build` options for the shipped Dockerfile: local bases only, the Docker format (it keeps
 * HEALTHCHECK), and the host's npm cache (filled by the `npm install` before the tests) lent to the
 * builder's `npm ci` as an overlay whose writes are thrown away: the packages are the lockfile's either way
 * (npm checks each one's integrity), and `npm ci` on a busy two-core machine takes about a minute less.
 */
export const BUILD_ARGS = ((): string[] => {
  const args = ["--pull=never", "--format", "docker"];
  let cache = "";
  try {
    cache = execFileSync("npm", ["config", "get", "cache"], { encoding: "utf8" }).trim();
  } catch {
    // no npm cache to lend
  }
  return cache && existsSync(path.join(cache, "_cacache")) ? [...args, "-v", `${cache}:/root/.npm:O`] : args;
})();
