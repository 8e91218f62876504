/**
 * `mcp-wiretap tail` as a user runs it: the BUILT CLI (`dist/cli/main.js`, run `npm run build` first; `npm
 * test` does) on the recorded fixture log, on stdin, and following a file through rotation and truncation.
 */
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_MAIN, NODE_BIN, REPO_ROOT, assertBuilt, runCli, spawnCli, type SpawnedCli } from "../helpers/proxy-harness.js";
import { UNSAFE_CHARS } from "../helpers/unsafe-chars.js";
import { waitUntil } from "../helpers/wait-until.js";

const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "session.ndjson");
const SNAPSHOT = path.join(REPO_ROOT, "test", "fixtures", "session.tail.txt");
const fixtureLines = readFileSync(FIXTURE, "utf8").split("\n").filter((l) => l !== "");
const fixtureRecords = fixtureLines.map((l) => JSON.parse(l) as Record<string, unknown>);
/** No colour unless a test asks for it: FORCE_COLOR may be set by the test runner. */
const PLAIN = { FORCE_COLOR: "", NO_COLOR: "" };

/** Runs the CLI with `input` on its stdin. */
function runWithStdin(args: string[], input: string, env: NodeJS.ProcessEnv = PLAIN): Promise<{ code: number | null; stdout: string; stderr: string }> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_BIN, [CLI_MAIN, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`tail on stdin did not end; stdout so far:\n${stdout}`));
    }, 15_000);
    // "close", not "exit": the process may exit before its stdout has been read to the end.
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // Written in pieces, the way a live `start | tail` delivers it.
    const third = Math.floor(input.length / 3);
    child.stdin.write(input.slice(0, third));
    setTimeout(() => {
      child.stdin.write(input.slice(third, 2 * third));
      child.stdin.end(input.slice(2 * third));
    }, 50);
  });
}

describe("mcp-wiretap tail (CLI)", () => {
  let dir: string;
  const running: SpawnedCli[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-tail-test-"));
  });
  afterAll(async () => {
    for (const cli of running) cli.kill();
    await Promise.all(running.map((cli) => cli.exited));
    await rm(dir, { recursive: true, force: true });
  });

  it("prints the fixture log as the snapshot shows it (not a TTY: no colour)", async () => {
    const r = await runCli(["tail", FIXTURE], { env: PLAIN });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(readFileSync(SNAPSHOT, "utf8"));
  });

  it("reads stdin when FILE is absent or -", async () => {
    const input = fixtureLines.join("\n") + "\n";
    const absent = await runWithStdin(["tail"], input);
    expect(absent.code).toBe(0);
    expect(absent.stdout).toBe(readFileSync(SNAPSHOT, "utf8"));
    const dash = await runWithStdin(["tail", "-", "--tool", "get-sum"], input);
    expect(dash.stdout.trimEnd().split("\n")).toHaveLength(2);
  });

  it("--json passes exactly the matching records through, unchanged", async () => {
    const r = await runCli(["tail", FIXTURE, "--json", "--tool", "echo,get-sum", "--decision", "flag"], { env: PLAIN });
    expect(r.code).toBe(0);
    const out = r.stdout.split("\n").filter((l) => l !== "");
    const expected = fixtureLines.filter((_, i) => {
      const rec = fixtureRecords[i]!;
      return (rec.tool === "echo" || rec.tool === "get-sum") && (rec.decision as { action?: string } | undefined)?.action === "flag";
    });
    expect(expected).toHaveLength(4);
    expect(out).toEqual(expected);
    for (const line of out) expect(() => JSON.parse(line)).not.toThrow();
    expect(r.stdout.endsWith("\n")).toBe(true);
  });

  it("--json writes raw control, bidi and invisible characters of older logs as JSON escapes, same records", async () => {
    // Characters a JSON text may hold raw (not C0, not a lone surrogate, which UTF-8 cannot carry).
    const chars = UNSAFE_CHARS.filter((c) => c.charCodeAt(0) >= 0x20 && !/^\p{Cs}$/u.test(c));
    const lines = chars.map((c, i) => `{"event":"rpc","kind":"request","id":${i},"method":"tools/call","tool":"x${c}y"}`);
    const r = await runWithStdin(["tail", "--json"], lines.join("\n") + "\n");
    expect(r.code).toBe(0);
    const out = r.stdout.split("\n").filter((l) => l !== "");
    expect(out).toHaveLength(chars.length);
    out.forEach((line, i) => {
      const c = chars[i]!;
      for (let k = 0; k < c.length; k++) expect(line).not.toContain(c[k]);
      expect(JSON.parse(line)).toEqual(JSON.parse(lines[i]!));
    });
  });

  it("--json with --server, --session and --method; non-JSON lines are dropped there, shown dimmed otherwise", async () => {
    const session = fixtureRecords.find((x) => x.event === "session" && x.transport === "streamable-http")!.session as string;
    const file = path.join(dir, "mixed.ndjson");
    writeFileSync(file, ["not json at all", ...fixtureLines, "{broken"].join("\n") + "\n");
    const r = await runCli(["tail", file, "--json", "--server", "127.0.0.1:*", "--session", session.slice(0, 8), "--method", "tools/*"], { env: PLAIN });
    const out = r.stdout.split("\n").filter((l) => l !== "");
    const expected = fixtureLines.filter((_, i) => {
      const rec = fixtureRecords[i]!;
      const related = rec.related as { method?: string } | undefined;
      return rec.event === "rpc" && rec.session === session && (String(rec.method).startsWith("tools/") || String(related?.method).startsWith("tools/"));
    });
    expect(out).toEqual(expected);
    const human = await runCli(["tail", file], { env: { FORCE_COLOR: "1", NO_COLOR: "" } });
    const lines = human.stdout.split("\n");
    expect(lines[0]).toBe("\u001b[2mnot json at all\u001b[22m");
    expect(lines.at(-2)).toBe("\u001b[2m{broken\u001b[22m");
  });

  it("colours with FORCE_COLOR, not with NO_COLOR, not on a pipe by default", async () => {
    const forced = await runCli(["tail", FIXTURE], { env: { FORCE_COLOR: "1", NO_COLOR: "" } });
    expect(forced.stdout).toContain("\u001b[");
    expect(forced.stdout).toContain("\u001b[1m\u001b[33mFLAG audit-arithmetic");
    const noColor = await runCli(["tail", FIXTURE], { env: { FORCE_COLOR: "", NO_COLOR: "1" } });
    expect(noColor.stdout).not.toContain("\u001b");
    expect(noColor.stdout).toBe(readFileSync(SNAPSHOT, "utf8"));
    const pipe = await runCli(["tail", FIXTURE], { env: PLAIN });
    expect(pipe.stdout).not.toContain("\u001b");
    const json = await runCli(["tail", FIXTURE, "--json"], { env: { FORCE_COLOR: "1", NO_COLOR: "" } });
    expect(json.stdout.split("\n").filter(Boolean)).toEqual(fixtureLines);
  });

  it("-n keeps the last n lines of the view", async () => {
    const r = await runCli(["tail", "-n", "3", FIXTURE], { env: PLAIN });
    expect(r.stdout).toBe(readFileSync(SNAPSHOT, "utf8").trimEnd().split("\n").slice(-3).join("\n") + "\n");
  });

  it("rejects a bad --decision (exit 2) and a missing file (exit 1)", async () => {
    const bad = await runCli(["tail", FIXTURE, "--decision", "maybe"], { env: PLAIN });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--decision.*must be one of allow, flag, deny/);
    const missing = await runCli(["tail", path.join(dir, "nope.ndjson")], { env: PLAIN });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*nope\.ndjson/);
  });

  it("--follow keeps reading through appends, rename-rotation, replacement and truncation", async () => {
    const file = path.join(dir, "live.ndjson");
    const stop = (reason: string) => JSON.stringify({ level: "info", time: "2026-01-01T00:00:00.000Z", event: "stop", reason });
    writeFileSync(file, `a1 plain\n${stop("a2")}\n`);
    const cli = spawnCli(["tail", "--follow", file], { env: PLAIN });
    running.push(cli);
    const seen = async (text: string) => waitUntil(() => cli.stdout().includes(text), { timeoutMs: 5_000, what: `${JSON.stringify(text)} in tail's output; got:\n${cli.stdout()}\nstderr:\n${cli.stderr()}` });

    await seen("a1 plain");
    await seen("── proxy stopped (a2)");

    appendFileSync(file, "a3 appended\n");
    await seen("a3 appended");
    // A line written in two parts is one line.
    appendFileSync(file, "a4 half");
    await new Promise((resolve) => setTimeout(resolve, 300));
    appendFileSync(file, " and the rest\n");
    await seen("a4 half and the rest");

    // Rotation by rename: the writer still appends to the old file for a while, then a new file takes the name.
    renameSync(file, `${file}.1`);
    appendFileSync(`${file}.1`, "a5 late write to the rotated file\n");
    await seen("a5 late write to the rotated file");
    writeFileSync(file, `b1 new file\n${stop("b2")}\n`);
    await seen("b1 new file");
    await seen("── proxy stopped (b2)");
    await waitUntil(() => /was replaced/.test(cli.stderr()), { what: "the rotation notice" });

    // Replacement in place (rename over the name).
    writeFileSync(`${file}.tmp`, "c1 replaced by rename-over\n");
    renameSync(`${file}.tmp`, file);
    await seen("c1 replaced by rename-over");

    // Truncation: read again from the start.
    truncateSync(file, 0);
    await waitUntil(() => /was truncated/.test(cli.stderr()), { what: "the truncation notice" });
    appendFileSync(file, "d1 after truncation\n");
    await seen("d1 after truncation");

    const out = cli.stdout().split("\n").filter(Boolean);
    expect(out).toEqual([
      "a1 plain",
      expect.stringContaining("── proxy stopped (a2)"),
      "a3 appended",
      "a4 half and the rest",
      "a5 late write to the rotated file",
      "b1 new file",
      expect.stringContaining("── proxy stopped (b2)"),
      "c1 replaced by rename-over",
      "d1 after truncation",
    ]);
    cli.kill();
    await cli.exited;
  });

  it("--help explains the marks: DENY* (enforced) against DENY (logged only), FLAG, the arrows", async () => {
    const help = await runCli(["tail", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^\s+DENY\*\s.*(enforced|blocked)/m);
    expect(help.stdout).toMatch(/^\s+DENY\s.*(monitor|logged only|not enforced)/m);
    expect(help.stdout).toMatch(/^\s+FLAG\s/m);
    expect(help.stdout).toMatch(/^\s+→\s.*client/m);
    expect(help.stdout).toMatch(/^\s+UNANSWERED\s/m);
  });

  it("--follow waits for a file that does not exist yet", async () => {
    const file = path.join(dir, "later.ndjson");
    const cli = spawnCli(["tail", "-f", file], { env: PLAIN });
    running.push(cli);
    await waitUntil(() => /no such file yet; waiting/.test(cli.stderr()), { what: "the waiting notice" });
    writeFileSync(file, `${fixtureLines[0]}\n`);
    await waitUntil(() => cli.stdout().includes("proxy 0.1.0 started"), { what: "the first line" });
    cli.kill();
    await cli.exited;
  });
});
