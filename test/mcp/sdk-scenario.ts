/**
 * The conversation both SDK end-to-end tests hold with server-everything through the proxy, and the
 * checks a user would make on the resulting log. Shared by sdk-streamable.test.ts and
 * sdk-legacy-sse.test.ts (this file is not a test itself).
 */
import { createHash } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect } from "vitest";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.js";
import { type LogRecord, type TestProxy, startTestProxy } from "../helpers/proxy-harness.js";

/** Canonical JSON written independently of src/mcp/canonical-json.ts: sorted keys, no whitespace. */
export function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : sortedJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function expectedArgsHash(args: unknown): string {
  return `sha256:${createHash("sha256").update(sortedJson(args), "utf8").digest("hex")}`;
}

export const rpc = (r: LogRecord): boolean => r.event === "rpc";

/** server-everything and a proxy logging full payloads, started before the suite's tests and stopped after. */
export function serverEverythingThroughProxy(): { readonly upstream: McpUpstream; readonly proxy: TestProxy } {
  let upstream: McpUpstream | undefined;
  let proxy: TestProxy | undefined;
  beforeAll(async () => {
    upstream = await startMcpUpstream();
    proxy = await startTestProxy({ payloads: "full" });
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
  });
  return {
    get upstream() {
      return upstream!;
    },
    get proxy() {
      return proxy!;
    },
  };
}

export interface ToolCallSent {
  name: string;
  arguments: Record<string, unknown>;
}

export interface ScenarioResult {
  toolCalls: ToolCallSent[];
  /** A progress record of the long call was in the log file before callTool resolved. */
  progressSeenWhileRunning: boolean;
  /** Progress records (for the long call) read before callTool resolved. */
  progressBeforeResolve: LogRecord[];
  progressCallbacks: number[];
}

const LONG_TOOL = "trigger-long-running-operation";

/**
 * initialize has already happened (connect). Lists, calls, reads, gets and pings; polls the log while
 * the long-running call is in flight.
 */
export async function runScenario(client: Client, proxy: TestProxy): Promise<ScenarioResult> {
  const toolCalls: ToolCallSent[] = [];
  const call = async (name: string, args: Record<string, unknown>) => {
    toolCalls.push({ name, arguments: args });
    return client.callTool({ name, arguments: args });
  };

  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["echo", "get-sum", LONG_TOOL]));

  const echo = await call("echo", { message: "héllo wiretap ✓ — 日本" });
  expect(echo.content).toEqual([{ type: "text", text: "Echo: héllo wiretap ✓ — 日本" }]);
  // Members deliberately out of order: the hash must not depend on it.
  const sum = await call("get-sum", { b: 3, a: 2 });
  expect(JSON.stringify(sum.content)).toContain("5");

  // The long call: 1.5 s, 3 steps (a progress notification every 0.5 s).
  const longArgs = { steps: 3, duration: 1.5 };
  toolCalls.push({ name: LONG_TOOL, arguments: longArgs });
  const progressCallbacks: number[] = [];
  let resolved = false;
  const pending = client
    .callTool({ name: LONG_TOOL, arguments: longArgs }, undefined, {
      onprogress: (p) => progressCallbacks.push(p.progress),
      timeout: 10_000,
    })
    .finally(() => {
      resolved = true;
    });
  let progressBeforeResolve: LogRecord[] = [];
  let progressSeenWhileRunning = false;
  while (!resolved) {
    const records = await proxy.records();
    const stillRunning = !resolved; // checked after the read: the read finished while the call ran
    const progress = records.filter((r) => rpc(r) && r.method === "notifications/progress" && (r.related as { tool?: string } | undefined)?.tool === LONG_TOOL);
    if (stillRunning && progress.length > 0) {
      progressSeenWhileRunning = true;
      progressBeforeResolve = progress;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const long = await pending;
  expect(JSON.stringify(long.content)).toContain("Long running operation completed");

  const { resources } = await client.listResources();
  expect(resources.length).toBeGreaterThan(0);
  const read = await client.readResource({ uri: resources[0]!.uri });
  expect(read.contents.length).toBeGreaterThan(0);

  const { prompts } = await client.listPrompts();
  expect(prompts.map((p) => p.name)).toContain("simple-prompt");
  const prompt = await client.getPrompt({ name: "simple-prompt" });
  expect(prompt.messages.length).toBeGreaterThan(0);

  expect(await client.ping()).toEqual({});
  return { toolCalls, progressSeenWhileRunning, progressBeforeResolve, progressCallbacks };
}

/** The checks both transports share, on the final log. */
export function checkLog(all: LogRecord[], scenario: ScenarioResult, expected: { transport: string; session: string; clientName: string }): void {
  // One client per proxy: every rpc record of the log belongs to this conversation.
  const records = all.filter(rpc);
  for (const r of records) {
    // Streamable HTTP: the initialize request goes out before the server assigns the session.
    if (r.session === null && r.method === "initialize" && r.kind === "request" && expected.transport === "streamable-http") continue;
    expect(r.session, `session of ${String(r.kind)} ${String(r.method)}`).toBe(expected.session);
  }
  const requests = records.filter((r) => r.kind === "request");
  const responses = records.filter((r) => r.kind === "response" || r.kind === "error");

  // Nothing unanswered, nothing invalid, anywhere in the log.
  expect(all.filter((r) => rpc(r) && (r.kind === "unanswered" || r.kind === "invalid"))).toEqual([]);
  for (const r of records) {
    expect(r.transport).toBe(expected.transport);
    expect(typeof r.protocolVersion).toBe("string");
  }

  const methods = requests.filter((r) => r.direction === "client_to_server").map((r) => r.method);
  for (const m of ["initialize", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/list", "prompts/get", "ping"]) {
    expect(methods, `a ${m} request record`).toContain(m);
  }
  expect(methods.filter((m) => m === "tools/call")).toHaveLength(scenario.toolCalls.length);

  // Every request: exactly one request record and exactly one matching response record.
  for (const req of requests) {
    const sameId = (r: LogRecord) => r.direction === req.direction && r.id === req.id;
    expect(requests.filter(sameId), `request records for id ${String(req.id)}`).toHaveLength(1);
    const answers = responses.filter((r) => r.direction !== req.direction && r.id === req.id);
    expect(answers, `responses to ${String(req.method)} id ${String(req.id)}`).toHaveLength(1);
    const answer = answers[0]!;
    expect(answer.kind).toBe("response");
    expect(answer.method).toBe(req.method);
    expect(answer.tool).toBe(req.tool);
    expect(typeof answer.latencyMs).toBe("number");
    expect(answer.latencyMs as number).toBeGreaterThanOrEqual(0);
  }
  // And every response answers a request of the log.
  for (const res of responses) {
    expect(requests.some((r) => r.id === res.id && r.direction !== res.direction), `request of response ${String(res.id)}`).toBe(true);
  }

  // tools/call: tool name and the hash of the arguments as sent.
  const calls = requests.filter((r) => r.method === "tools/call");
  calls.forEach((r, i) => {
    const sent = scenario.toolCalls[i]!;
    expect(r.tool).toBe(sent.name);
    expect(r.argsHash).toBe(expectedArgsHash(sent.arguments));
    expect(r.argsHash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
  // Same arguments in another member order hash the same; the echo hash is not the sum hash.
  expect(expectedArgsHash({ a: 2, b: 3 })).toBe(calls[1]!.argsHash);
  expect(new Set(calls.map((c) => c.argsHash)).size).toBe(calls.length);

  // Progress: linked to the long call, and readable in the log while the call was still running.
  const longCall = calls.find((r) => r.tool === "trigger-long-running-operation")!;
  const progress = records.filter((r) => r.method === "notifications/progress");
  expect(progress.length).toBeGreaterThanOrEqual(2);
  for (const p of progress) {
    expect(p.kind).toBe("notification");
    expect(p.direction).toBe("server_to_client");
    expect(p.related).toMatchObject({ id: longCall.id, method: "tools/call", tool: "trigger-long-running-operation" });
    expect((p.related as { elapsedMs: number }).elapsedMs).toBeGreaterThanOrEqual(0);
    expect(p.progressToken).not.toBeNull();
  }
  expect(scenario.progressSeenWhileRunning).toBe(true);
  expect(scenario.progressBeforeResolve[0]?.related).toMatchObject({ id: longCall.id });
  const longAnswer = responses.find((r) => r.id === longCall.id && r.direction === "server_to_client")!;
  expect(longAnswer.latencyMs as number).toBeGreaterThanOrEqual(1000);

  // Session start and end.
  const sessions = all.filter((r) => r.event === "session" && r.session === expected.session);
  const start = sessions.find((r) => r.phase === "start");
  expect(start).toBeDefined();
  expect(start).toMatchObject({
    transport: expected.transport,
    clientInfo: { name: expected.clientName },
    serverInfo: { name: "mcp-servers/everything" },
  });
  expect(typeof start!.protocolVersion).toBe("string");
  const caps = start!.capabilities as { client: unknown; server: Record<string, unknown> };
  expect(caps.client).toBeTypeOf("object");
  expect(caps.server).toHaveProperty("tools");
  expect(caps.server).toHaveProperty("prompts");
  expect(caps.server).toHaveProperty("resources");
  expect(start!.instructionsBytes as number).toBeGreaterThanOrEqual(0);
  const init = records.find((r) => r.kind === "response" && r.method === "initialize")!;
  expect(init.protocolVersion).toBe(start!.protocolVersion);
}
