/**
 * The official MCP SDK client reaches the reference server ("server-everything", behind TLS) through the
 * proxy, over Streamable HTTP and legacy HTTP+SSE, and every call is answered exactly as without the proxy.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy, type LogRecord, type TestProxy } from "../helpers/proxy-harness.js";

interface Session {
  results: Record<string, unknown>;
  progress: Progress[];
}

/** The same conversation on any client; returns everything the server answered. */
async function converse(client: Client): Promise<Session> {
  const progress: Progress[] = [];
  const results: Record<string, unknown> = {};
  results.serverVersion = client.getServerVersion();
  results.capabilities = client.getServerCapabilities();
  results.tools = await client.listTools();
  results.echo = await client.callTool({ name: "echo", arguments: { message: "hello through the wiretap ✓" } });
  results.sum = await client.callTool({ name: "get-sum", arguments: { a: 19, b: 23 } });
  results.longRunning = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 10_000 },
  );
  results.resources = await client.listResources();
  results.prompts = await client.listPrompts();
  results.ping = await client.ping();
  return { results, progress };
}

function expectAnswers(session: Session): void {
  const { results, progress } = session;
  expect((results.tools as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(
    expect.arrayContaining(["echo", "get-sum", "trigger-long-running-operation"]),
  );
  expect(results.echo).toEqual({ content: [{ type: "text", text: "Echo: hello through the wiretap ✓" }] });
  expect(results.sum).toEqual({ content: [{ type: "text", text: "The sum of 19 and 23 is 42." }] });
  expect(results.longRunning).toEqual({
    content: [{ type: "text", text: "Long running operation completed. Duration: 0.3 seconds, Steps: 3." }],
  });
  // Progress arrives step by step. (Over legacy SSE the SDK client reports only steps 1 and 2, without the
  // proxy too: the last notification comes right with the result and loses the race; so: ≥ 2, in order.)
  expect(progress.length).toBeGreaterThanOrEqual(2);
  expect(progress.map((p) => [p.progress, p.total])).toEqual(
    [
      [1, 3],
      [2, 3],
      [3, 3],
    ].slice(0, progress.length),
  );
  expect((results.resources as { resources: unknown[] }).resources.length).toBeGreaterThan(0);
  expect((results.prompts as { prompts: unknown[] }).prompts.length).toBeGreaterThan(0);
  expect(results.ping).toEqual({});
}

describe("MCP SDK client through the proxy", () => {
  let proxy: TestProxy;
  let upstream: McpUpstream;

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startMcpUpstream();
  });

  afterAll(async () => {
    await upstream?.close();
    await proxy?.stop();
  });

  const fromProxy = (r: LogRecord) => r.event === "http" && r.server === `127.0.0.1:${upstream.port}`;

  it("Streamable HTTP: every call answered exactly as directly", async () => {
    const direct = await connectStreamable(upstream.streamableUrl, { caPem: upstream.caPem });
    let directSession: Session;
    try {
      directSession = await converse(direct.client);
    } finally {
      await direct.close();
    }
    const seenBefore = (await proxy.records()).filter(fromProxy).length;
    const toolCallsBefore = upstream.counters.toolCalls;

    const proxied = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    let proxiedSession: Session;
    try {
      proxiedSession = await converse(proxied.client);
    } finally {
      await proxied.close();
    }
    expectAnswers(proxiedSession);
    expect(proxiedSession.results).toEqual(directSession.results);
    expect(upstream.counters.toolCalls - toolCallsBefore).toBe(3);

    // initialize, initialized, 7 requests, and the session's DELETE (plus the optional GET stream).
    const records = (await proxy.waitForRecords(fromProxy, seenBefore + 10)).slice(seenBefore);
    const posts = records.filter((r) => r.method === "POST" && r.path === "/mcp");
    expect(posts.length).toBeGreaterThanOrEqual(9);
    expect(posts.every((r) => r.mode === "mitm" && (r.status === 200 || r.status === 202))).toBe(true);
    await proxy.waitForRecord((r) => fromProxy(r) && r.method === "DELETE" && r.path === "/mcp" && r.status === 200);
    expect(records.filter((r) => r.error && (r.error as { code: string }).code !== "client_aborted")).toEqual([]);
  });

  it("legacy HTTP+SSE: every call answered exactly as directly", async () => {
    const direct = await connectSse(upstream.sseUrl, { caPem: upstream.caPem });
    let directSession: Session;
    try {
      directSession = await converse(direct.client);
    } finally {
      await direct.close();
    }
    const seenBefore = (await proxy.records()).filter(fromProxy).length;

    const proxied = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    let proxiedSession: Session;
    try {
      proxiedSession = await converse(proxied.client);
    } finally {
      await proxied.close();
    }
    expectAnswers(proxiedSession);
    expect(proxiedSession.results).toEqual(directSession.results);

    const records = (await proxy.waitForRecords(fromProxy, seenBefore + 10)).slice(seenBefore);
    const posts = records.filter((r) => r.method === "POST" && String(r.path).startsWith("/message"));
    expect(posts.length).toBeGreaterThanOrEqual(9);
    expect(posts.every((r) => r.status === 202)).toBe(true);
    // The SSE stream itself is recorded when the client closes it.
    const stream = await proxy.waitForRecord((r) => fromProxy(r) && r.method === "GET" && r.path === "/sse");
    expect(stream.status).toBe(200);
    expect(stream.responseBytes).toBeGreaterThan(0);
  });
});
