/**
 * `diff` of two real runs (SDK client ↔ server-everything through the proxy) where the server changed one
 * tool's description between them, and of hand-made runs for outcomes and latency.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { runCli, type LogRecord } from "../helpers/proxy-harness.js";
import { cleanLog, removeLogs, rpcRecord, writeLog } from "./hand-made.js";
import { recordRun, removeRuns, type RecordedRun } from "./recorded-run.js";

const NEW_DESCRIPTION = "Echoes back the input string, and keeps a copy";

/** The server's registered tools (the SDK keeps them in a private table; there is no getter). */
function registeredTool(server: McpServer, name: string): { description?: string } {
  return (server as unknown as { _registeredTools: Record<string, { description?: string }> })._registeredTools[name]!;
}

let before: RecordedRun;
let after: RecordedRun;
let oldDescription = "";
beforeAll(async () => {
  before = await recordRun((server) => {
    oldDescription = registeredTool(server, "echo").description ?? "";
  });
  after = await recordRun((server) => {
    registeredTool(server, "echo").description = NEW_DESCRIPTION;
  });
}, 120_000);
afterAll(async () => {
  await removeRuns();
  await removeLogs();
});

describe("diff of two real runs", () => {
  it("shows exactly the changed description, as a line diff, and --exit-code fails", async () => {
    expect(oldDescription).not.toBe("");
    const json = await runCli(["diff", before.logFile, after.logFile, "--json"]);
    const d = JSON.parse(json.stdout) as { changes: Record<string, unknown>[]; regressions: number };
    expect(d.changes).toEqual([
      { type: "tool_changed", server: "mcp-servers/everything@127.0.0.1", tool: "echo", field: "description", before: oldDescription, after: NEW_DESCRIPTION, regression: true },
    ]);
    const text = await runCli(["diff", before.logFile, after.logFile, "--exit-code"]);
    expect(text.code).toBe(1);
    expect(text.stdout).toBe(
      [
        "server mcp-servers/everything@127.0.0.1",
        "  !~ tool echo: description changed",
        `        - ${oldDescription}`,
        `        + ${NEW_DESCRIPTION}`,
        "1 difference(s): 1 regression(s), 0 other",
        "",
      ].join("\n"),
    );
  });

  it("the same run against itself: no differences, exit 0", async () => {
    const r = await runCli(["diff", before.logFile, before.logFile, "--exit-code"]);
    expect(r.stdout).toBe("no differences\n");
    expect(r.code).toBe(0);
  });

  it("with tool listings not recorded (--payloads none) says so and compares no tools", async () => {
    const omit = (records: LogRecord[]) =>
      records.map((r) => (r.event === "rpc" && r.method === "tools/list" && r.kind === "response" ? { ...r, result: { omitted: true, bytes: 7000, sha256: "sha256:00" } } : r));
    const r = await runCli(["diff", await writeLog(omit(before.records)), await writeLog(omit(after.records)), "--exit-code"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("note: 2 tools/list result(s) of mcp-servers/everything@127.0.0.1 in A were not recorded in full");
    expect(r.stdout).toContain("no differences");
  });
});

describe("diff of hand-made runs", () => {
  const call = (id: number, over: Partial<LogRecord>, answer: Partial<LogRecord>) => [
    rpcRecord({ id, tool: "deploy", argsHash: "sha256:d1", ...over }),
    rpcRecord({ id, tool: "deploy", direction: "server_to_client", kind: "response", latencyMs: 20, ...answer }),
  ];
  const runOf = (records: LogRecord[]) => writeLog([cleanLog()[0]!, ...records, cleanLog().at(-1)!]);

  it("an outcome that got worse (ok → error, allow → deny) is a regression; one that got better is not", async () => {
    const ok = await runOf(call(1, {}, {}));
    const failing = await runOf(call(1, {}, { kind: "error", error: { code: -32603, message: "boom" } }));
    const denied = await runOf(call(1, { decision: { action: "deny", enforced: true, rules: [] } }, {}));
    const worse = await runCli(["diff", ok, failing, "--exit-code"]);
    expect(worse.stdout).toContain("!  tools/call deploy args sha256:d1…: ok → error (1 → 1 calls)");
    expect(worse.code).toBe(1);
    expect((await runCli(["diff", ok, denied, "--exit-code"])).stdout).toContain("ok → ok, deny");
    const better = await runCli(["diff", failing, ok, "--exit-code"]);
    expect(better.stdout).toContain("tools/call deploy args sha256:d1…: error → ok");
    expect(better.code).toBe(0);
  });

  it("latency: a median past both --latency-ratio and --latency-min is a shift; slower fails, faster does not", async () => {
    const fast = await runOf(call(1, {}, { latencyMs: 50 }));
    const slow = await runOf(call(1, {}, { latencyMs: 400 }));
    const slower = await runCli(["diff", fast, slow, "--exit-code"]);
    expect(slower.stdout).toContain("tools/call deploy: slower, p50 50ms → 400ms (1 → 1 calls)");
    expect(slower.code).toBe(1);
    expect((await runCli(["diff", slow, fast, "--exit-code"])).code).toBe(0);
    // 8× slower, but by less than --latency-min: no shift.
    expect((await runCli(["diff", fast, slow, "--exit-code", "--latency-min", "400"])).stdout).toBe("no differences\n");
    expect((await runCli(["diff", fast, slow, "--exit-code", "--latency-ratio", "10"])).code).toBe(0);
  });

  it("exits 2 when an input cannot be read", async () => {
    expect((await runCli(["diff", "/nonexistent/a.ndjson", "/nonexistent/b.ndjson"])).code).toBe(2);
  });
});
