/**
 * `check` as CI runs it (the built CLI, exit codes): every condition fires on a log made for it, names the
 * offending record, and stays quiet on a clean real run; the JUnit report validates against the Apache Ant
 * JUnit schema (test/fixtures/junit.xsd) with xmllint.
 */
import { spawnSync } from "node:child_process";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONDITIONS } from "../../src/analysis/conditions.js";
import { REPO_ROOT, runCli, type LogRecord } from "../helpers/proxy-harness.js";
import { CASES, chained, cleanLog, multiRound, removeLogs, rpcRecord, writeLog } from "./hand-made.js";
import { recordRun, removeRuns, type RecordedRun } from "./recorded-run.js";
import { skipNote } from "../helpers/skip-note.js";

const check = (args: string[]) => runCli(["check", ...args]);

let run: RecordedRun;
beforeAll(async () => {
  run = await recordRun();
}, 60_000);
afterAll(async () => {
  await removeRuns();
  await removeLogs();
});

describe("check conditions", () => {
  it("a clean real run (SDK client, server-everything, two transports) passes every condition", async () => {
    const r = await check([run.logFile, "--fail-on", "all"]);
    expect(r.stdout).toMatch(/^ok: none of error, invalid, deny, flag, pending, mismatch, drift, app-changed, deprecated, incomplete in \d+ records\n$/);
    expect(r.code).toBe(0);
  });

  it("a clean hand-made log passes every condition too", async () => {
    expect((await check([await writeLog(cleanLog()), "--fail-on", "all"])).code).toBe(0);
  });

  it.each(CONDITIONS)("%s fires on its case, alone with --fail-on, and among all", async (condition) => {
    const file = await writeLog(CASES[condition]!());
    const alone = await check([file, "--fail-on", condition]);
    expect(alone.code, alone.stdout + alone.stderr).toBe(1);
    const lines = alone.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toMatch(new RegExp(`^FAILED: \\d+ finding\\(s\\): ${condition} \\d+ \\(checked: ${condition};`));
    for (const line of lines.slice(0, -1)) expect(line.startsWith(`${condition} `)).toBe(true);
    // The case is quiet for the default conditions unless it is one of them.
    const byDefault = await check([file]);
    expect(byDefault.code).toBe(["error", "invalid", "deny"].includes(condition) ? 1 : 0);
  });

  it("a file that holds no record at all (a policy file given by mistake, an empty log) is a usage error, not a pass", async () => {
    const yaml = await writeLog("mode: enforce\nrules: []\n", "policy.yaml");
    const notLog = await check([yaml]);
    expect(notLog.code).toBe(2);
    expect(notLog.stderr).toContain(`${yaml} holds no mcp-wiretap record (2 lines skipped)`);
    const empty = await check([await writeLog("", "empty.ndjson"), "--fail-on", "all"]);
    expect(empty.code).toBe(2);
  });

  it("names the offending record: time, server, session, id, method and tool, and why", async () => {
    const records = CASES.deny!();
    const denied = records.find((r) => r.decision && (r.decision as { action: string }).action === "deny")!;
    const r = await check([await writeLog(records)]);
    expect(r.stdout.split("\n")[0]).toBe(
      `deny       ${denied.time as string}  server ${denied.server as string}  session ${denied.session as string}  id 6  tools/call delete-all: deny by no-delete: by test`,
    );
  });

  it("pending: a request still waiting when the log ends; mismatch: both the header that disagrees and the one missing", async () => {
    const cut = await writeLog([...cleanLog().slice(0, -1), rpcRecord({ id: 99, tool: "hangs" }), cleanLog().at(-1)!]);
    expect((await check([cut, "--fail-on", "pending"])).stdout).toContain("id 99  tools/call hangs: no answer before the log ends");
    const m = await check([await writeLog(CASES.mismatch!()), "--fail-on", "mismatch"]);
    expect(m.stdout).toContain('Mcp-Name header "other" but body "echo"');
    expect(m.stdout).toContain("id 10  tools/call echo: required headers missing under 2026-07-28: Mcp-Method, Mcp-Name");
  });

  it("flag: a multi-round retry whose requestState was changed", async () => {
    const file = await writeLog([...cleanLog().slice(0, -1), ...multiRound("rs-forged"), cleanLog().at(-1)!]);
    const r = await check([file, "--fail-on", "flag"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("id 11  tools/call ask: requestState differs from the one the server issued (tampered?)");
    expect((await check([await writeLog([...cleanLog().slice(0, -1), ...multiRound(), cleanLog().at(-1)!]), "--fail-on", "all"])).code).toBe(0);
  });

  it("deprecated: the HTTP+SSE transport under 2026-07-28; not under 2025-11-25", async () => {
    const legacy = (v: string) => [rpcRecord({ id: 3, transport: "http+sse", protocolVersion: v, session: "/message?sessionId=1" }), rpcRecord({ id: 3, transport: "http+sse", protocolVersion: v, session: "/message?sessionId=1", direction: "server_to_client", kind: "response" })];
    const late = await check([await writeLog([...cleanLog().slice(0, -1), ...legacy("2026-07-28"), cleanLog().at(-1)!]), "--fail-on", "deprecated"]);
    expect(late.stdout).toContain("the HTTP+SSE transport is deprecated in 2026-07-28");
    expect((await check([await writeLog([...cleanLog().slice(0, -1), ...legacy("2025-11-25"), cleanLog().at(-1)!]), "--fail-on", "deprecated"])).code).toBe(0);
  });

  it("incomplete: a removed chained record, a log without stop, dropped records, a line cut short; an intact chain passes", async () => {
    const cutChain = await check([await writeLog(CASES.incomplete!()), "--fail-on", "incomplete"]);
    expect(cutChain.stdout).toMatch(/incomplete .*: 1 record\(s\) removed before this one \(seq 2-2\)/);
    expect((await check([await writeLog(chained(cleanLog())), "--fail-on", "incomplete"])).code).toBe(0);
    const noStop = await check([await writeLog(cleanLog().slice(0, -1)), "--fail-on", "incomplete"]);
    expect(noStop.stdout).toContain("the log does not end with a stop record");
    const dropped = await check([await writeLog([...cleanLog().slice(0, -1), { ...cleanLog().at(-1)!, droppedRecords: 7 }]), "--fail-on", "incomplete"]);
    expect(dropped.stdout).toContain("the proxy dropped 7 record(s) it could not write");
    const text = cleanLog().map((r) => JSON.stringify(r)).join("\n") + '\n{"level":"info","ti';
    const cutLine = await check([await writeLog(text), "--fail-on", "incomplete"]);
    expect(cutLine.stdout).toMatch(/log\.ndjson:5: not a JSON record/);
  });

  it("--forbid-tool, --expect-tool and --max-latency on the real run", async () => {
    const forbidden = await check([run.logFile, "--forbid-tool", "get-*"]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stdout.split("\n").filter((l) => l.startsWith("forbid-tool "))).toHaveLength(2);
    expect((await check([run.logFile, "--expect-tool", "echo", "--expect-tool", "get-sum"])).code).toBe(0);
    const missing = await check([run.logFile, "--expect-tool", "deploy"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain("no call of tool deploy in the log");
    expect((await check([run.logFile, "--max-latency", "60000"])).code).toBe(0);
    const slowest = Math.max(...run.records.filter((r) => typeof r.latencyMs === "number").map((r) => r.latencyMs as number));
    expect((await check([run.logFile, "--max-latency", String(slowest - 1)])).code).toBe(1);
  });

  it("exits 2 on a usage error: an unknown condition, a missing file", async () => {
    expect((await check([run.logFile, "--fail-on", "errors"])).code).toBe(2);
    const missing = await check([path.join(path.dirname(run.logFile), "nope.ndjson")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("nope.ndjson");
  });
});

/** xmllint, installed by scripts/ensure-test-deps.sh when missing (root with apt-get); null when it cannot be had. */
function xmllint(): string | null {
  const which = () => spawnSync("sh", ["-c", "command -v xmllint"], { encoding: "utf8" }).stdout.trim() || null;
  if (which()) return which();
  spawnSync("bash", [path.join(REPO_ROOT, "scripts", "ensure-test-deps.sh")], { stdio: "inherit", timeout: 300_000 });
  return which();
}

describe("check --format junit", () => {
  const lint = xmllint();
  skipNote(import.meta.url, !lint, "xmllint is not installed and scripts/ensure-test-deps.sh could not install it (needs root and apt-get; package libxml2-utils)");

  it.skipIf(!lint)("validates against the JUnit schema: one testcase per condition per session, failed where it holds", async () => {
    const records: LogRecord[] = [cleanLog()[0]!, ...Object.values(CASES).flatMap((make) => make().slice(1, -1)), rpcRecord({ id: 5, tool: 'q"<&>\u0001' })];
    const out = path.join(path.dirname(await writeLog(records)), "report.xml");
    const r = await check([path.join(path.dirname(out), "log.ndjson"), "--fail-on", "all", "--format", "junit", "-o", out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mcp-wiretap check: FAILED: \d+ finding\(s\), see .*report\.xml/);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const lintResult = spawnSync(lint!, ["--noout", "--schema", path.join(REPO_ROOT, "test", "fixtures", "junit.xsd"), out], { encoding: "utf8" });
    expect(lintResult.stderr).toContain("validates");
    expect(lintResult.status).toBe(0);
    const xml = await readFile(out, "utf8");
    const suites = [...xml.matchAll(/<testsuite name="([^"]*)"/g)].map((m) => m[1]);
    // The log as a whole, the session, and the stateless traffic of the server (no session).
    expect(suites).toEqual(["log", "127.0.0.1:9443 5e551011-0000-4000-8000-000000000001", "127.0.0.1:9443 (no session)"]);
    expect((xml.match(/<testcase /g) ?? []).length).toBe(suites.length * CONDITIONS.length);
    const failed = (suite: string) => [...xml.split("<testsuite ").find((s) => s.startsWith(`name="${suite}"`))!.matchAll(/<failure message="[^"]*" type="([a-z-]+)"/g)].map((m) => m[1]).sort();
    expect(failed("127.0.0.1:9443 5e551011-0000-4000-8000-000000000001")).toEqual(["app-changed", "deny", "drift", "error", "flag", "invalid", "pending"]);
    expect(failed("127.0.0.1:9443 (no session)")).toEqual(["deprecated", "mismatch"]);
    expect(failed("log")).toEqual(["incomplete"]);
  });

  it.skipIf(!lint)("a clean real run gives a valid report with no failure", async () => {
    const out = path.join(path.dirname(run.logFile), "clean.xml");
    expect((await check([run.logFile, "--fail-on", "all", "--format", "junit", "-o", out])).code).toBe(0);
    const lintResult = spawnSync(lint!, ["--noout", "--schema", path.join(REPO_ROOT, "test", "fixtures", "junit.xsd"), out], { encoding: "utf8" });
    expect(lintResult.status, lintResult.stderr).toBe(0);
    const xml = await readFile(out, "utf8");
    expect(xml).not.toContain("<failure");
    // One suite per MCP session (two transports) plus the log's.
    expect((xml.match(/<testsuite /g) ?? []).length).toBe(1 + run.records.filter((r) => r.event === "session" && r.phase === "start").length);
  });
});
