/**
 * `stats` over a real recorded run (SDK client ↔ server-everything through the proxy, two transports):
 * every figure is recomputed here from the raw records, independently of src/analysis, and the counts the
 * scenario knows by construction are asserted too. Hand-made logs cover what a clean run lacks.
 */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statsCommand } from "../../src/cli/stats-command.js";
import type { GroupStats, StatsReport } from "../../src/analysis/stats.js";
import type { LogRecord } from "../helpers/proxy-harness.js";
import { recordRun, removeRuns, SCENARIO, type RecordedRun } from "./recorded-run.js";
import { handMadeLog, removeLogs, writeLog } from "./hand-made.js";

async function stats(files: string[], o: Parameters<typeof statsCommand>[1] = {}): Promise<{ code: number; out: string }> {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on("data", (c: Buffer) => chunks.push(c));
  const code = await statsCommand(files, o, { stdout, stderr: new PassThrough(), stdin: new PassThrough() });
  return { code, out: Buffer.concat(chunks).toString("utf8") };
}

async function statsJson(files: string[], o: Parameters<typeof statsCommand>[1] = {}): Promise<StatsReport> {
  const { code, out } = await stats(files, { ...o, json: true });
  expect(code).toBe(0);
  return JSON.parse(out) as StatsReport;
}

/** Nearest rank, written out for the test: the value at position ceil(p/100 · n) of the sorted list. */
function nearestRank(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.ceil((p * sorted.length) / 100) - 1] ?? sorted[0]!;
}

/** What a user would compute from the log with jq: per tool, from the tools/call records alone. */
function expectedForTool(records: LogRecord[], tool: string) {
  const rpc = records.filter((r) => r.event === "rpc" && r.method === "tools/call" && r.tool === tool);
  const requests = rpc.filter((r) => r.kind === "request");
  const answers = rpc.filter((r) => r.kind === "response" || r.kind === "error");
  const latencies = answers.map((r) => r.latencyMs as number);
  const errors = answers.filter((r) => r.kind === "error" || (r.result as { isError?: boolean } | undefined)?.isError === true);
  const times = rpc.map((r) => r.time as string).sort();
  return {
    calls: requests.length,
    errors: errors.length,
    latencyMs: { count: latencies.length, p50: nearestRank(latencies, 50), p95: nearestRank(latencies, 95), p99: nearestRank(latencies, 99), max: Math.max(...latencies) },
    requestBytes: { total: requests.reduce((s, r) => s + (r.bytes as number), 0), p95: nearestRank(requests.map((r) => r.bytes as number), 95) },
    responseBytes: { total: answers.reduce((s, r) => s + (r.bytes as number), 0), p95: nearestRank(answers.map((r) => r.bytes as number), 95) },
    firstSeen: times[0],
    lastSeen: times.at(-1),
  };
}

describe("stats over a real recorded run", () => {
  let run: RecordedRun;
  beforeAll(async () => {
    run = await recordRun();
  }, 60_000);
  afterAll(removeRuns);

  it("per tool: calls, errors, latency percentiles, bytes and first/last seen equal what the records say", async () => {
    const report = await statsJson([run.logFile]);
    const group = (tool: string): GroupStats => report.groups.find((g) => g.key.method === "tools/call" && g.key.tool === tool)!;
    // Known by construction: three echo calls over Streamable HTTP and one over HTTP+SSE; two sums.
    expect(group("echo").calls).toBe(SCENARIO.echoMessages.length + 1);
    expect(group("get-sum").calls).toBe(SCENARIO.sums.length);
    for (const tool of ["echo", "get-sum"]) {
      expect(group(tool)).toMatchObject({ ...expectedForTool(run.records, tool), denied: 0, flagged: 0, unanswered: 0 });
    }
    // tools/list was called once per transport; initialize once per session.
    expect(report.groups.find((g) => g.key.method === "tools/list")!.calls).toBe(2);
    expect(report.groups.find((g) => g.key.method === "initialize")!.calls).toBe(2);
    expect(report.totals.calls).toBe(report.groups.reduce((s, g) => s + g.calls, 0));
  });

  it("--by session splits the two transports' sessions; --tool keeps one tool", async () => {
    const bySession = await statsJson([run.logFile], { by: "session" });
    const sessions = run.records.filter((r) => r.event === "session" && r.phase === "start").map((r) => r.session);
    expect(bySession.groups.map((g) => g.key.session).sort()).toEqual([...sessions].sort());
    const echoOnly = await statsJson([run.logFile], { tool: ["echo"] });
    expect(echoOnly.groups.map((g) => g.key.tool)).toEqual(["echo"]);
  });

  it("--by session names a legacy SSE session by its sessionId in the table, not its endpoint", async () => {
    const legacy = run.records.find((r) => r.event === "session" && r.transport === "http+sse")!.session as string;
    const id = new URLSearchParams(legacy.slice(legacy.indexOf("?") + 1)).get("sessionId")!;
    const { out } = await stats([run.logFile], { by: "session" });
    expect(out).not.toContain("/message?sessionId=");
    expect(out.split("\n").some((l) => l.startsWith(`${id} @ `))).toBe(true);
  });

  it("prints a table with a row per tool and a total", async () => {
    const { out } = await stats([run.logFile]);
    const lines = out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^TOOL\s+CALLS\s+ERR\s+DENY\s+FLAG\s+UNANS\s+P50\s+P95\s+P99\s+MAX\s+REQ\s+REQ p95\s+RESP\s+RESP p95\s+FIRST\s+LAST$/);
    expect(lines.find((l) => l.startsWith("tools/call echo "))).toMatch(/^tools\/call echo\s+4\s/);
    expect(lines.at(-1)).toMatch(/^TOTAL\s+\d+/);
  });
});

describe("stats over hand-made edge cases", () => {
  afterAll(removeLogs);

  it("an unanswered call counts as unanswered, with no latency; a tool result with isError counts as an error", async () => {
    const file = await writeLog(handMadeLog());
    const report = await statsJson([file]);
    const slow = report.groups.find((g) => g.key.tool === "slow")!;
    expect(slow).toMatchObject({ calls: 1, unanswered: 1, errors: 0, latencyMs: { count: 0, p50: null } });
    const broken = report.groups.find((g) => g.key.tool === "broken")!;
    expect(broken).toMatchObject({ calls: 2, errors: 2, rpcErrors: 1, toolErrors: 1 });
  });

  it("a multi-round call counts once, its latency the sum of its rounds and its bytes those of every round", async () => {
    const file = await writeLog(handMadeLog());
    const ask = (await statsJson([file])).groups.find((g) => g.key.tool === "ask")!;
    expect(ask).toMatchObject({ calls: 1, ok: 1, multiRound: 1, latencyMs: { count: 1, p50: 3 + 9 }, requestBytes: { total: 100 + 160 }, responseBytes: { total: 80 + 70 } });
  });

  it("a log cut mid-line still gives figures for what was read", async () => {
    const text = handMadeLog().map((r) => JSON.stringify(r)).join("\n") + '\n{"level":"info","time":"2026-';
    const file = await writeLog(text);
    expect((await statsJson([file])).totals.calls).toBeGreaterThan(0);
  });
});
