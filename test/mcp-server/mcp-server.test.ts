/**
 * `mcp-wiretap mcp`: the official SDK client asks the server about a capture made here through the proxy
 * (server-everything: echo, a failing call, a denied call, a call with progress). Over stdio the built CLI
 * is spawned; over HTTP the server runs in-process. Answers are checked against the `stats` and `check`
 * commands and the records themselves.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PassThrough } from "node:stream";
import { checkCommand } from "../../src/cli/check-command.js";
import { statsCommand } from "../../src/cli/stats-command.js";
import { mcpCommand } from "../../src/mcp-server/command.js";
import { CONDITIONS } from "../../src/analysis/names.js";
import { connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { CLI_MAIN, NODE_BIN, readRecords, startTestProxy, testCaFile, type LogRecord } from "../helpers/proxy-harness.js";

const POLICY = `mode: enforce
default: allow
rules:
  - name: no-env-dump
    action: deny
    reason: reads the server's environment
    match: { method: tools/call, tool: get-env }
`;

let dir: string;
let upstream: McpUpstream;
let capture: string;
let records: LogRecord[];
let stdio: Client;
let httpServer: { url: string; token: string; stop: AbortController; done: Promise<void> };
let httpClient: Client;

type Structured = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A command run in-process, as the CLI runs it: its exit code and what it printed. */
async function command(run: (io: { stdout: PassThrough; stderr: PassThrough; stdin: PassThrough }) => Promise<number>): Promise<{ code: number; stdout: string }> {
  const io = { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough() };
  let stdout = "";
  io.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  io.stderr.resume();
  const code = await run(io);
  return { code, stdout };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(result.structuredContent);
  return result.structuredContent as Structured;
}

async function toolError(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBe(true);
  return (result.content as { text: string }[])[0]!.text;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-mcp-server-"));
  const policy = path.join(dir, "policy.yaml");
  writeFileSync(policy, POLICY);
  capture = path.join(dir, "capture.ndjson");
  upstream = await startMcpUpstream({
    customize: (server: McpServer) => {
      server.registerTool("explode", { description: "Always fails" }, () => ({ isError: true, content: [{ type: "text", text: "the disk is on fire" }] }));
    },
  });
  const proxy = await startTestProxy({ logFile: capture, config: policy, caDir: path.join(dir, "ca") });
  try {
    const s = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "capture-client" });
    await s.client.listTools();
    await s.client.callTool({ name: "echo", arguments: { message: "hello" } });
    await s.client.callTool({ name: "explode", arguments: {} });
    await s.client.callTool({ name: "get-env", arguments: {} }).catch(() => undefined);
    await s.client.callTool({ name: "trigger-long-running-operation", arguments: { steps: 2, duration: 0.2 } }, undefined, { onprogress: () => undefined });
    await s.client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
    await s.close();
  } finally {
    await proxy.stop("captured");
  }
  records = await readRecords(capture);

  stdio = new Client({ name: "test-agent", version: "1.0.0" });
  await stdio.connect(new StdioClientTransport({ command: NODE_BIN, args: [CLI_MAIN, "mcp", capture], stderr: "ignore" }));

  // Over HTTP: a copy of the capture (replays append to it), replay allowed.
  const copy = path.join(dir, "copy", "capture.ndjson");
  rmSync(path.dirname(copy), { recursive: true, force: true });
  mkdirSync(path.dirname(copy), { mode: 0o700 });
  copyFileSync(capture, copy);
  const stop = new AbortController();
  let ready!: (info: { url: string; token: string }) => void;
  const started = new Promise<{ url: string; token: string }>((resolve) => (ready = resolve));
  const done = mcpCommand([path.dirname(copy)], { port: 0, allowReplay: true, caDir: path.join(dir, "ca"), config: policy, upstreamCa: [testCaFile()], timeout: 10_000 }, { signal: stop.signal, onReady: ready });
  const info = await Promise.race([started, done.then(() => Promise.reject(new Error("mcp server ended")))]);
  httpServer = { ...info, stop, done };
  httpClient = new Client({ name: "test-agent-http", version: "1.0.0" });
  await httpClient.connect(new StreamableHTTPClientTransport(new URL(info.url), { requestInit: { headers: { authorization: `Bearer ${info.token}` } } }));
}, 60_000);

afterAll(async () => {
  await stdio?.close();
  await httpClient?.close();
  httpServer?.stop.abort();
  await httpServer?.done;
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("mcp-wiretap mcp over stdio (the built CLI)", () => {
  it("offers the read tools, each with an output schema; replay_call only with --allow-replay", async () => {
    const { tools } = await stdio.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["check", "get_exchange", "list_sessions", "recent_failures", "search_messages", "stats", "tool_catalog"]);
    for (const t of tools) expect(t.outputSchema, t.name).toBeDefined();
    expect((await httpClient.listTools()).tools.map((t) => t.name)).toContain("replay_call");
  });

  it("stats gives the numbers `stats --json` prints", async () => {
    const cli = await command((io) => statsCommand([capture], { json: true }, io));
    expect(cli.code).toBe(0);
    const expected = JSON.parse(cli.stdout) as Structured;
    const got = await call(stdio, "stats", {});
    expect(got.totals).toEqual(expected.totals);
    expect(got.groups).toEqual(expected.groups);
    expect(got.totals.errors).toBe(1);
    expect(got.totals.denied).toBe(1);
  });

  it("check finds what `check --fail-on all` finds", async () => {
    const cli = await command((io) => checkCommand([capture], { failOn: [...CONDITIONS] }, io));
    const got = await call(stdio, "check", { failOn: ["all"] });
    expect(cli.code).toBe(1);
    expect(got.ok).toBe(false);
    expect(`${got.summary}\n`).toBe(cli.stdout.slice(cli.stdout.lastIndexOf("FAILED:")));
    expect(got.findings.length).toBe(got.total);
    expect(got.counts.deny).toBe(1);
    expect(await toolError(stdio, "check", { failOn: ["nonsense"] })).toMatch(/unknown condition "nonsense"/);
  });

  it("an agent finds the failing call and its error in two tool calls", async () => {
    const failures = (await call(stdio, "recent_failures", {})).failures as Structured[];
    expect(failures.map((f) => [f.failure, f.tool])).toEqual([
      ["denied", "get-env"],
      ["tool_error", "explode"],
    ]);
    const exchange = await call(stdio, "get_exchange", { selector: failures[1]!.selector });
    const answer = exchange.records.map((r: Structured) => r.record).find((r: Structured) => r.kind === "response");
    expect(answer.result.content[0].text).toBe("the disk is on fire");
    expect(exchange.outcome).toBe("tool_error");
    const denied = failures[0]!;
    expect(denied.rules.map((r: Structured) => r.name)).toContain("no-env-dump");
  });

  it("get_exchange shows a call's progress, latency and HTTP status as the records have them", async () => {
    const request = records.find((r) => r.kind === "request" && r.tool === "trigger-long-running-operation")!;
    const progress = records.filter((r) => r.method === "notifications/progress" && (r.related as Structured | undefined)?.id === request.id);
    expect(progress.length).toBe(2);
    const got = await call(stdio, "get_exchange", { selector: `${request.flow as string}#${String(request.id)}` });
    const kinds = got.records.map((r: Structured) => `${r.record.kind} ${r.record.method}`);
    expect(kinds.filter((k: string) => k === "notification notifications/progress").length).toBe(2);
    const response = records.find((r) => r.kind === "response" && r.id === request.id && r.flow === request.flow)!;
    expect(got.latencyMs).toBe(response.latencyMs);
    expect(got.httpStatus).toBe(200);
    expect(await toolError(stdio, "get_exchange", { selector: "ffffffff-nope#1" })).toMatch(/no request with that flow and id/);
  });

  it("search_messages: tail's tokens and free text, newest first, paged by cursor, large records by their head", async () => {
    const echoes = records.filter((r) => r.event === "rpc" && r.tool === "echo");
    const first = await call(stdio, "search_messages", { query: "tool:echo", limit: 1 });
    expect(first.hits.length).toBe(1);
    expect(first.truncated).toBe(true);
    expect(first.hits[0].record.time).toBe(echoes.at(-1)!.time);
    const rest = await call(stdio, "search_messages", { query: "tool:echo", cursor: first.nextCursor });
    expect(1 + rest.hits.length).toBe(echoes.length);
    expect(rest.nextCursor).toBeNull();
    const free = await call(stdio, "search_messages", { query: "FIRE" });
    expect(free.hits.map((h: Structured) => h.record.tool)).toEqual(["explode"]);
    const heads = await call(stdio, "search_messages", { query: "method:tools/list", maxRecordBytes: 100 });
    const listing = heads.hits.find((h: Structured) => h.head?.kind === "response");
    expect(listing.cut).toBe(true);
    expect(listing.record).toBeUndefined();
    expect(listing.bytes).toBeGreaterThan(100);
    const budget = await call(stdio, "search_messages", { query: "", maxBytes: 2_000, limit: 500 });
    expect(budget.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(budget.hits))).toBeLessThan(2_000 + 20_000);
  });

  it("list_sessions and the session resource hold what the log holds", async () => {
    const { sessions } = await call(stdio, "list_sessions", {});
    const main = sessions.find((s: Structured) => s.client === "capture-client");
    expect(main.serverName).toBe("mcp-servers/everything");
    expect(main.calls).toBe(records.filter((r) => r.kind === "request" && r.direction === "client_to_server" && r.session === main.id).length + records.filter((r) => r.kind === "request" && r.session === null && r.method === "initialize").length);
    expect(main.errors).toBe(1);
    expect(main.denials).toBe(1);
    const resource = await stdio.readResource({ uri: main.uri });
    const text = (resource.contents[0] as { text: string }).text;
    const lines = text.trimEnd().split("\n").map((l) => JSON.parse(l) as LogRecord);
    expect(lines.filter((r) => r.event === "rpc" && r.session === main.id).length).toBe(records.filter((r) => r.event === "rpc" && r.session === main.id).length);
    await expect(stdio.readResource({ uri: "wiretap://session/..%2F..%2Fetc%2Fpasswd" })).rejects.toThrow(/no session/);
  });

  it("tool_catalog lists each tool with a token estimate", async () => {
    const { servers } = await call(stdio, "tool_catalog", {});
    expect(servers.length).toBe(1);
    const echo = servers[0].tools.find((t: Structured) => t.name === "echo");
    expect(echo.tokens).toBe(Math.ceil(echo.bytes / 4));
    expect(servers[0].totalTokens).toBeGreaterThan(echo.tokens);
  });

  it("offers the diagnosis prompt", async () => {
    const prompt = await stdio.getPrompt({ name: "diagnose_failure", arguments: { tool: "explode" } });
    expect((prompt.messages[0]!.content as { text: string }).text).toMatch(/recent_failures with query "tool:explode"/);
  });
});

describe("mcp-wiretap mcp over Streamable HTTP", () => {
  const raw = (headers: Record<string, string>): Promise<number> =>
    new Promise((resolve, reject) => {
      const url = new URL(httpServer.url);
      const req = http.request({ host: "127.0.0.1", port: url.port, path: url.pathname, method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }));
    });

  it("answers the same as over stdio", async () => {
    expect((await call(httpClient, "stats", {})).totals).toEqual((await call(stdio, "stats", {})).totals);
  });

  it("refuses a wrong token, a foreign Origin and a rebinding Host", async () => {
    const good = `Bearer ${httpServer.token}`;
    expect(await raw({ authorization: good })).toBe(200);
    expect(await raw({})).toBe(401);
    expect(await raw({ authorization: `Bearer ${"x".repeat(httpServer.token.length)}` })).toBe(401);
    expect(await raw({ authorization: good, origin: "https://evil.example" })).toBe(403);
    expect(await raw({ authorization: good, host: `evil.example:${new URL(httpServer.url).port}` })).toBe(403);
  });

  it("replay_call: a tool not marked read-only needs confirm: true; a read-only one replays with its edits", async () => {
    const selectorOf = (tool: string) => {
      const request = records.find((r) => r.kind === "request" && r.tool === tool)!;
      return `${request.flow as string}#${String(request.id)}`;
    };
    const explodes = upstream.counters.toolCallsByName.get("explode") ?? 0;
    expect(await toolError(httpClient, "replay_call", { selector: selectorOf("explode") })).toMatch(/refused: the capture does not mark tool explode read-only.*confirm: true/);
    expect(upstream.counters.toolCallsByName.get("explode") ?? 0).toBe(explodes);
    // A set that names another tool is judged as that tool: get-sum's read-only mark does not carry over to explode.
    expect(await toolError(httpClient, "replay_call", { selector: selectorOf("get-sum"), set: [`name="explode"`] })).toMatch(/refused: the capture does not mark tool explode read-only.*confirm: true/);
    expect(upstream.counters.toolCallsByName.get("explode") ?? 0).toBe(explodes);
    const before = upstream.counters.toolCallsByName.get("get-sum") ?? 0;
    const replayed = await call(httpClient, "replay_call", { selector: selectorOf("get-sum"), set: ["arguments.b=40"] });
    expect(replayed.answered).toBe(true);
    expect(replayed.exitCode).toBe(0);
    expect(JSON.stringify(replayed.answer)).toContain("41");
    expect(upstream.counters.toolCallsByName.get("get-sum")).toBe(before + 1);
    // The replay's records were appended to the served log, which is followed.
    await expect.poll(async () => (await call(httpClient, "search_messages", { query: "tool:get-sum replayOf" })).hits.length, { timeout: 3_000 }).toBeGreaterThan(0);
  });
});

describe("following a live log", () => {
  it("a new call shows up within a second", async () => {
    const liveDir = path.join(dir, "live");
    mkdirSync(liveDir, { mode: 0o700 });
    const logFile = path.join(liveDir, "live.ndjson");
    const proxy = await startTestProxy({ logFile, caDir: path.join(dir, "ca") });
    const agent = new Client({ name: "live-agent", version: "1.0.0" });
    try {
      const s = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "live-client" });
      await s.client.listTools();
      await agent.connect(new StdioClientTransport({ command: NODE_BIN, args: [CLI_MAIN, "mcp", liveDir], stderr: "ignore" }));
      expect((await call(agent, "search_messages", { query: "tool:echo" })).hits).toEqual([]);
      await s.client.callTool({ name: "echo", arguments: { message: "live one" } });
      const answered = Date.now();
      let seenAfter = -1;
      for (let i = 0; i < 40; i++) {
        const hits = (await call(agent, "search_messages", { query: "tool:echo live" })).hits as Structured[];
        if (hits.some((h) => h.record?.kind === "response")) {
          seenAfter = Date.now() - answered;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(seenAfter).toBeGreaterThanOrEqual(0);
      expect(seenAfter).toBeLessThan(1_000);
      await s.close();
    } finally {
      await agent.close();
      await proxy.stop("live done");
    }
  });
});
