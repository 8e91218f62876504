/**
 * `mcp-wiretap tail` on a file that is not an mcp-wiretap log (a policy file, a package.json): it says so,
 * with how many lines it skipped, and exits 1, instead of echoing the file. A log with a stray line before
 * its records, and an empty (not yet written) log, are still fine. Runs the built CLI.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/proxy-harness.js";

const POLICY = path.join(REPO_ROOT, "config", "policy.yaml");
const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "session.ndjson");
const PLAIN = { FORCE_COLOR: "", NO_COLOR: "" };
const nonBlank = (file: string) => readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").length;

describe("tail on something that is not an mcp-wiretap log", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-tail-nolog-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([[[]], [["--json"]], [["-f"]], [["-n", "5"]]])("a YAML file (%j): says so, counts the skipped lines, exits 1", async (flags) => {
    const result = await runCli(["tail", ...flags, POLICY], { env: PLAIN });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`${POLICY} is not an mcp-wiretap log`);
    expect(result.stderr).toContain(`skipped ${nonBlank(POLICY)} lines`);
    expect(result.stderr).toMatch(/--log-file/);
  });

  it("JSON that is not a log record (package.json on one line) is not a log either", async () => {
    const file = path.join(dir, "package.json");
    writeFileSync(file, JSON.stringify({ name: "x", version: "1.0.0" }) + "\n");
    const result = await runCli(["tail", file], { env: PLAIN });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("skipped 1 line");
  });

  it("a log with a stray line before its records is shown whole, exit 0", async () => {
    const file = path.join(dir, "mixed.ndjson");
    writeFileSync(file, `npm warn something\n${readFileSync(FIXTURE, "utf8")}`);
    const result = await runCli(["tail", file], { env: PLAIN });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe("npm warn something");
    expect(result.stdout).toContain("tools/call");
    expect(result.stderr).toBe("");
  });

  it("an empty log is fine (nothing written yet)", async () => {
    const file = path.join(dir, "empty.ndjson");
    writeFileSync(file, "");
    const result = await runCli(["tail", file], { env: PLAIN });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
  });
});
