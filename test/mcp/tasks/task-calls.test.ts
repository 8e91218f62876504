/**
 * A call made as a task is one call: the official SDK client (`experimental.tasks.callToolStream`) and
 * server-everything's task-only tool `simulate-research-query` (four stages, about 4 s), through the proxy
 * over Streamable HTTP and TLS. What a user checks is read from the log alone, with the analysis code
 * `stats` and `check` run on it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { buildCalls } from "../../../src/analysis/calls.js";
import { findConditions } from "../../../src/analysis/conditions.js";
import { computeStats } from "../../../src/analysis/stats.js";
import { McpSpanBuilder, type McpSpan } from "../../../src/otel/mcp-spans.js";
import { rpcLine } from "../../../src/cli/tail/rpc-line.js";
import { painter } from "../../../src/saved-logs/color.js";
import { Store } from "../../../src/ui/web/model.js";
import { connectSse, connectStreamable } from "../../helpers/mcp-client.js";
import { monitorAndEnforce } from "../../helpers/monitor-and-enforce.js";
import type { LogRecord, TestProxy } from "../../helpers/proxy-harness.js";
import { expectRecordsMatchSchemas } from "../../records/expect-records.js";

const TOOL = "simulate-research-query";
const RESULT_RULE = `rules:
  - name: research-results
    action: flag
    reason: results of the research tool are reviewed
    match: { method: tools/call, tool: ${TOOL}, direction: server_to_client }
`;
const ENFORCE = `mode: enforce
detectors: { hiddenText: deny }
`;

const env = monitorAndEnforce({ monitorPolicy: RESULT_RULE, enforcePolicy: ENFORCE });

async function connected(proxy: TestProxy): Promise<Awaited<ReturnType<typeof connectStreamable>>> {
  const c = await connectStreamable(env.upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
  await c.client.listTools(); // the SDK learns which tools need a task
  return c;
}

/** Runs the task tool to its end; returns the messages the SDK yielded, by type. */
async function runTask(client: Client, topic: string): Promise<{ types: string[]; taskId: string; last: unknown }> {
  const types: string[] = [];
  let taskId = "";
  let last: unknown;
  for await (const m of client.experimental.tasks.callToolStream({ name: TOOL, arguments: { topic } })) {
    types.push(m.type);
    if (m.type === "taskCreated") taskId = m.task.taskId;
    last = m;
  }
  return { types, taskId, last };
}

const rpcOf = (records: LogRecord[], taskId: string) => records.filter((r) => r.event === "rpc" && (r.task as { id?: string } | undefined)?.id === taskId);

describe("a task is one call", () => {
  let monitorRun: { records: LogRecord[]; taskId: string; types: string[] };
  let enforceRun: { records: LogRecord[]; last: unknown; taskId: string };
  let sseTaskId = "";
  let inputTaskId = "";

  beforeAll(async () => {
    // Both proxies' runs at once: the file costs one task's time.
    const [m, e, sse, input] = await Promise.all([
      (async () => {
        const c = await connected(env.monitor);
        try {
          const run = await runTask(c.client, "tides");
          return { ...run };
        } finally {
          await c.close();
        }
      })(),
      (async () => {
        const c = await connected(env.enforce);
        try {
          return await runTask(c.client, "tides\u200Bunseen");
        } finally {
          await c.close();
        }
      })(),
      (async () => {
        const c = await connectSse(env.upstream.sseUrl, { proxyUrl: env.monitor.url, caPem: env.monitor.caPem });
        try {
          await c.client.listTools();
          return await runTask(c.client, "legacy");
        } finally {
          await c.close();
        }
      })(),
      (async () => {
        // A client that can answer elicitations: the ambiguous query asks it for input mid-task.
        const c = await connectStreamable(env.upstream.streamableUrl, { proxyUrl: env.monitor.url, caPem: env.monitor.caPem, clientOptions: { capabilities: { elicitation: {} } } });
        c.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { interpretation: "technical" } }));
        try {
          await c.client.listTools();
          let taskId = "";
          let last: unknown;
          for await (const msg of c.client.experimental.tasks.callToolStream({ name: TOOL, arguments: { topic: "python", ambiguous: true } })) {
            if (msg.type === "taskCreated") taskId = msg.task.taskId;
            last = msg;
          }
          return { taskId, last };
        } finally {
          await c.close();
        }
      })(),
    ]);
    sseTaskId = sse.taskId;
    inputTaskId = input.taskId;
    monitorRun = { ...m, records: await env.monitor.waitForRecords((r) => r.event === "session" && r.phase === "end", 3).then(() => env.monitor.records()) };
    enforceRun = { ...e, records: await env.enforce.waitForRecords((r) => r.event === "session" && r.phase === "end", 1).then(() => env.enforce.records()) };
  }, 30_000);

  /** The records of the plain run's session only (the other runs share the monitor proxy). */
  const withoutOtherRuns = (records: LogRecord[]): LogRecord[] => {
    const session = rpcOf(records, monitorRun.taskId)[0]!.session;
    const flows = new Set(records.filter((r) => r.session === session).map((r) => r.flow));
    return records.filter((r) => r.session === session || flows.has(r.flow));
  };

  it("every record of the task carries the tool, the task id and the originating call; the latency runs to the terminal state", () => {
    expect(monitorRun.types).toEqual(expect.arrayContaining(["taskCreated", "taskStatus", "result"]));
    const records = monitorRun.records.filter((r) => r.event === "rpc");
    const request = records.find((r) => r.kind === "request" && r.method === "tools/call" && r.tool === TOOL)!;
    const call = request.call as string;
    expect(call).toBe(`${request.flow as string}#n:${request.id as number}`);
    const ofTask = rpcOf(records, monitorRun.taskId);
    const methods = new Set(ofTask.map((r) => r.method));
    for (const m of ["tools/call", "tasks/get", "notifications/tasks/status", "tasks/result"]) expect(methods).toContain(m);
    for (const r of ofTask) expect({ tool: r.tool, call: r.call }).toEqual({ tool: TOOL, call });
    const creation = ofTask.find((r) => (r.task as { created?: boolean }).created)!;
    expect(creation).toMatchObject({ kind: "response", method: "tools/call", task: { status: "working" } });
    expect(creation.latencyMs as number).toBeLessThan(2_000);
    const ends = ofTask.filter((r) => (r.task as { end?: unknown }).end !== undefined);
    expect(ends).toHaveLength(1);
    const end = (ends[0]!.task as { end: { status: string; callLatencyMs: number } }).end;
    expect(end.status).toBe("completed");
    expect(end.callLatencyMs).toBeGreaterThanOrEqual(3_500);
    const final = ofTask.find((r) => r.kind === "response" && r.method === "tasks/result")!;
    expect(final.task).toMatchObject({ final: true });
    expect(JSON.stringify(final.result)).toContain("Research Report: tides");

    // stats: one call of the tool, its latency the task's; no call of tasks/get or tasks/result of its own.
    const calls = buildCalls(withoutOtherRuns(monitorRun.records));
    const stats = computeStats(calls, "tool");
    const group = stats.groups.find((g) => g.key.tool === TOOL)!;
    expect(group).toMatchObject({ calls: 1, ok: 1, unanswered: 0 });
    expect(group.latencyMs.max).toBe(end.callLatencyMs);
    expect(stats.groups.filter((g) => String(g.key.method).startsWith("tasks/"))).toEqual([]);
    const logs = { records: monitorRun.records, sources: [], chain: null };
    expectRecordsMatchSchemas(monitorRun.records, "rpc", "session");
    expect(findConditions(logs, calls, { failOn: ["pending"] })).toEqual([]);
  });

  it("over legacy HTTP+SSE too (answers on the GET stream): one call, its latency to the task's end", () => {
    const ofTask = rpcOf(monitorRun.records, sseTaskId);
    expect(ofTask.length).toBeGreaterThan(4);
    expect(ofTask.every((r) => r.transport === "http+sse" && r.tool === TOOL)).toBe(true);
    const call = buildCalls(monitorRun.records).find((c) => c.taskId === sseTaskId)!;
    expect(call).toMatchObject({ tool: TOOL, outcome: "ok", transport: "http+sse" });
    expect(call.latencyMs).toBeGreaterThanOrEqual(3_500);
  });

  it("an input_required turn (the server's elicitation, delivered on the tasks/result stream) belongs to the call", () => {
    const ofTask = rpcOf(monitorRun.records, inputTaskId);
    const elicitation = ofTask.filter((r) => r.method === "elicitation/create");
    expect(elicitation.map((r) => `${r.kind} ${r.direction}`)).toEqual(["request server_to_client", "response client_to_server"]);
    for (const r of elicitation) expect(r.tool).toBe(TOOL);
    expect(ofTask.some((r) => (r.task as { status?: string }).status === "input_required")).toBe(true);
    const call = buildCalls(monitorRun.records).find((c) => c.taskId === inputTaskId)!;
    expect(call).toMatchObject({ tool: TOOL, outcome: "ok" });
    expect(call.records.map((r) => r.method)).toContain("elicitation/create");
    expect(buildCalls(monitorRun.records).filter((c) => c.method === "elicitation/create")).toEqual([]);
    const final = ofTask.find((r) => r.method === "tasks/result" && r.kind === "response")!;
    expect(JSON.stringify(final.result)).toContain("technical");
  });

  it("OpenTelemetry: one span from the request to the task's terminal state, its polls and status notifications events on it", () => {
    const spans: McpSpan[] = [];
    const builder = new McpSpanBuilder({ payloads: false }, (span) => spans.push(span));
    for (const r of withoutOtherRuns(monitorRun.records)) builder.record(r);
    builder.closeAll(Date.now(), "end of log");
    const ofTool = spans.filter((span) => span.attributes["gen_ai.tool.name"] === TOOL);
    expect(ofTool).toHaveLength(1);
    const span = ofTool[0]!;
    expect(span).toMatchObject({ name: `tools/call ${TOOL}`, error: null, attributes: { "mcp.task.id": monitorRun.taskId, "mcp_wiretap.decision.action": "flag" } });
    expect(span.endMs - span.startMs).toBeGreaterThanOrEqual(3_500);
    const names = new Set(span.events.map((e) => e.name));
    for (const m of ["tasks/get", "notifications/tasks/status"]) expect(names).toContain(m);
    expect(span.events.some((e) => e.attributes["mcp.task.status"] === "completed")).toBe(true);
    expect(spans.filter((s) => String(s.attributes["mcp.method.name"]).startsWith("tasks/"))).toEqual([]);
  });

  it("tail: each line of the task names the tool and where the task stands; its end gives the call's latency", () => {
    const lines = rpcOf(monitorRun.records, monitorRun.taskId).map((r) => rpcLine(painter(false), r, ""));
    expect(lines.every((l) => l.includes(TOOL))).toBe(true);
    expect(lines.some((l) => l.includes("⧗ task created (working)"))).toBe(true);
    expect(lines.some((l) => /⧗ task completed after [34]\.\ds/.test(l))).toBe(true);
    expect(lines.some((l) => l.includes("tasks/result") && l.includes(", result"))).toBe(true);
  });

  it("the web page: the call's group holds the task's timeline, its answer the final result, its latency the task's", () => {
    const store = new Store();
    for (const r of withoutOtherRuns(monitorRun.records)) store.add(r, JSON.stringify(r));
    const groups = new Set(store.msgs.filter((m) => m.record.tool === TOOL && m.group).map((m) => m.group!));
    expect(groups.size).toBe(1);
    const group = [...groups][0]!;
    expect(group.request.record.method).toBe("tools/call");
    expect(group.answer?.record).toMatchObject({ method: "tasks/result", kind: "response" });
    expect(group.status).toBe("ok");
    expect(group.task?.latencyMs).toBeGreaterThanOrEqual(3_500);
    expect(group.asides.map((m) => m.record.method)).toEqual(expect.arrayContaining(["tools/call", "tasks/get", "notifications/tasks/status", "tasks/result"]));
    expect(store.tools.get(`${group.request.record.server as string} ${TOOL}`)?.latencies).toEqual([group.task!.latencyMs]);
  });

  it("a rule on the tool's results judges the result that tasks/result brings (monitor mode)", () => {
    const final = rpcOf(monitorRun.records, monitorRun.taskId).find((r) => r.kind === "response" && r.method === "tasks/result")!;
    expect(final.decision).toMatchObject({ action: "flag", rules: [expect.objectContaining({ name: "research-results" })] });
    // Polls and status notifications are not the tool's results.
    for (const r of rpcOf(monitorRun.records, monitorRun.taskId).filter((r) => r.method === "tasks/get" || r.method === "notifications/tasks/status")) {
      expect((r.decision as { action: string }).action).toBe("allow");
    }
  });

  it("enforce mode: the final result is judged before the client gets it; a denied one never reaches it", () => {
    const final = rpcOf(enforceRun.records, enforceRun.taskId).find((r) => r.method === "tasks/result" && r.direction === "server_to_client")!;
    expect(final).toMatchObject({ tool: TOOL, decision: { action: "deny", enforced: true } });
    expect(enforceRun.last).toMatchObject({ type: "error" });
    expect(String((enforceRun.last as { error: Error }).error.message)).toContain("blocked by mcp-wiretap policy");
    // The task's text never reached the client: the polls carry none of it, the result was replaced.
    const group = computeStats(buildCalls(enforceRun.records), "tool").groups.find((g) => g.key.tool === TOOL)!;
    expect(group).toMatchObject({ calls: 1, denied: 1 });
  });
});

describe("tasks that do not end well", () => {
  it("a cancelled task: one call, cancelled, its latency to the cancellation", async () => {
    const c = await connected(env.monitor);
    let taskId = "";
    try {
      const created = await c.client.request({ method: "tools/call", params: { name: TOOL, arguments: { topic: "reefs" }, task: {} } }, CreateTaskResultSchema);
      taskId = created.task.taskId;
      const cancelled = await c.client.experimental.tasks.cancelTask(taskId);
      expect(cancelled.status).toBe("cancelled");
    } finally {
      await c.close();
    }
    const end = await env.monitor.waitForRecord((r) => (r.task as { id?: string; end?: unknown } | undefined)?.id === taskId && (r.task as { end?: unknown }).end !== undefined);
    expect(end).toMatchObject({ method: "tasks/cancel", kind: "response", tool: TOOL, task: { status: "cancelled", end: { status: "cancelled" } } });
    const calls = buildCalls(await env.monitor.records()).filter((call) => call.taskId === taskId);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ tool: TOOL, outcome: "cancelled" });
  });

  it("a task whose tasks/result never comes: the session's end reports the call unanswered, and check's pending names it", async () => {
    const c = await connected(env.monitor);
    const created = await c.client.request({ method: "tools/call", params: { name: TOOL, arguments: { topic: "dunes" }, task: {} } }, CreateTaskResultSchema);
    const taskId = created.task.taskId;
    // tasks/result blocks until the task ends; the client leaves first.
    void c.client.experimental.tasks.getTaskResult(taskId).catch(() => undefined);
    await env.monitor.waitForRecord((r) => r.method === "tasks/result" && (r.task as { id?: string } | undefined)?.id === taskId);
    await c.close();
    const lost = await env.monitor.waitForRecord((r) => r.kind === "unanswered" && r.method === "tools/call" && (r.task as { id?: string } | undefined)?.id === taskId);
    expect(lost).toMatchObject({ tool: TOOL, reason: expect.stringMatching(/^session ended \(.+\) before the task reached a terminal state$/) });
    const records = await env.monitor.records();
    const calls = buildCalls(records);
    const call = calls.find((x) => x.taskId === taskId)!;
    expect(call.outcome).toBe("unanswered");
    expectRecordsMatchSchemas(records, "rpc");
    const pending = findConditions({ records, sources: [], chain: null }, calls, { failOn: ["pending"] });
    expect(pending.filter((f) => f.tool === TOOL && f.method === "tools/call")).toHaveLength(1);
  });

  it("tasks/get for a task id the proxy never saw, and one of another session, are recorded as such", async () => {
    const a = await connected(env.monitor);
    const b = await connected(env.monitor);
    try {
      const created = await a.client.request({ method: "tools/call", params: { name: TOOL, arguments: { topic: "moss" }, task: {} } }, CreateTaskResultSchema);
      await b.client.experimental.tasks.getTask(created.task.taskId).catch(() => undefined);
      await b.client.experimental.tasks.getTaskResult("no-such-task").catch(() => undefined);
      await a.client.experimental.tasks.cancelTask(created.task.taskId);
      const other = await env.monitor.waitForRecord((r) => r.kind === "request" && r.method === "tasks/get" && (r.task as { id?: string }).id === created.task.taskId);
      expect(other.task).toMatchObject({ problem: "the task belongs to another session" });
      expect(other.tool).toBeNull();
      const unknown = await env.monitor.waitForRecord((r) => r.kind === "request" && r.method === "tasks/result" && (r.task as { id?: string }).id === "no-such-task");
      expect((unknown.task as { problem: string }).problem).toMatch(/^tasks\/result for a task the proxy never saw created/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
