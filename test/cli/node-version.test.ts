/**
 * The CLI on a Node.js older than `engines.node`: one sentence that names the version found and what to
 * do, a non-zero exit, no stack trace. Runs the built CLI with the system's Node 20 (`/usr/bin/node`), and
 * is skipped, saying so, where that Node is missing or new enough.
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assertBuilt, CLI_MAIN, REPO_ROOT } from "../helpers/proxy-harness.js";

const OLD_NODE = "/usr/bin/node";
const ENGINES = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
const MINIMUM = ENGINES.replace(/^>=\s*/, "");

function versionOf(node: string): string | null {
  if (!existsSync(node)) return null;
  return execFileSync(node, ["--version"], { encoding: "utf8" }).trim().replace(/^v/, "");
}

function olderThanMinimum(version: string): boolean {
  const [major, minor] = version.split(".").map(Number) as [number, number];
  const [minMajor, minMinor] = MINIMUM.split(".").map(Number) as [number, number];
  return major < minMajor || (major === minMajor && minor < minMinor);
}

const oldVersion = versionOf(OLD_NODE);
const skipReason = oldVersion === null ? `${OLD_NODE} is missing` : olderThanMinimum(oldVersion) ? null : `${OLD_NODE} is Node ${oldVersion}, not older than ${MINIMUM}`;
if (skipReason) console.warn(`SKIPPED the old-Node checks: ${skipReason}`);

function runOld(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(OLD_NODE, [CLI_MAIN, ...args], { cwd: os.tmpdir(), timeout: 15_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

describe.skipIf(skipReason !== null)(`the CLI on Node ${oldVersion ?? "(none)"}`, () => {
  it.each([["ca", "show"], ["start", "--port", "0"], ["env"], ["--version"], ["tail", "x.ndjson"]])(
    "`mcp-wiretap %s` says which Node it needs and what to do, and exits non-zero",
    async (...args) => {
      assertBuilt();
      const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-old-node-"));
      try {
        const result = await runOld(args.includes("ca") || args.includes("start") || args.includes("env") ? [...args, "--ca-dir", dir] : args);
        expect(result.code).not.toBe(0);
        expect(result.code).not.toBeNull();
        expect(result.stdout).toBe("");
        expect(result.stderr).toContain(`mcp-wiretap needs Node.js ≥ ${MINIMUM} (found ${oldVersion})`);
        expect(result.stderr).toMatch(/install Node\.js 22|nvm install 22/i);
        expect(result.stderr).not.toMatch(/TypeError|\n\s+at /);
        expect(result.stderr.trim().split("\n").length).toBeLessThanOrEqual(4);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
