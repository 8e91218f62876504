/**
 * A replay of a captured echo call beside the same call made directly with the SDK client: each a fresh MCP
 * session (replay makes one: initialize, initialized, the call, DELETE), taking turns against one loopback
 * Streamable HTTP server (the SDK's own, with an echo tool). The replay is timed in-process through
 * src/replay's `replayOverHttp` (built, dist/), the function `mcp-wiretap replay` and the web UI's Replay
 * both call after reading the capture: its own proxy started, the policy loaded, the call judged and
 * recorded, the proxy stopped. The CLI's process start and log reading are not in it.
 */
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { REPO } from "./paths.ts";
import { round, summarize, type Summary } from "./stats.ts";

export interface ReplayResult {
  rounds: number;
  direct: Summary;
  replay: Summary;
  /** Median of the replays minus median of the direct calls. */
  addedMedianMs: number | null;
  how: string;
}

const PROTOCOL = "2025-11-25";
const FLOW = "bench-replay-flow-0001";

type Records = Record<string, unknown>[];
interface ReplayModules {
  findBySelector(records: Records, selector: string): { selector: string; params: Record<string, unknown> | undefined };
  sessionPlan(call: unknown, params: unknown): unknown;
  replayOverHttp(r: unknown, plan: unknown, o: unknown): Promise<{ answer: { message: Record<string, unknown> } }>;
}

async function loadReplay(): Promise<ReplayModules> {
  const dist = (p: string): string => pathToFileURL(path.join(REPO, "dist", "replay", p)).href;
  const [selection, call, httpReplay] = await Promise.all([import(dist("selection.js")), import(dist("replay-call.js")), import(dist("http-replay.js"))]);
  return { findBySelector: selection.findBySelector, sessionPlan: call.sessionPlan, replayOverHttp: httpReplay.replayOverHttp };
}

/** The SDK's Streamable HTTP server with one echo tool, a session (and a server) per initialize. */
async function startEchoServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer((req, res) => {
    const id = req.headers["mcp-session-id"];
    const known = typeof id === "string" ? sessions.get(id) : undefined;
    if (known) return void known.handleRequest(req, res);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void sessions.set(sid, transport) });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const mcp = new McpServer({ name: "bench-echo", version: "1" });
    mcp.registerTool("echo", { inputSchema: { message: z.string() } }, ({ message }) => ({ content: [{ type: "text", text: `Echo: ${message}` }] }));
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the proxy records of an echo call over plain HTTP: the session's handshake, the call and its answer. */
function capture(url: URL): Records {
  const server = url.host;
  const base = { level: "info", time: new Date().toISOString(), flow: FLOW, transport: "streamable-http", server, path: url.pathname, session: "bench-session", protocolVersion: PROTOCOL };
  return [
    { ...base, event: "session", phase: "start", capabilities: { client: {} }, clientInfo: { name: "bench", version: "1" } },
    { ...base, event: "http", method: "POST", status: 200 },
    { ...base, event: "rpc", direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool: "echo", params: { name: "echo", arguments: { message: "bench" } } },
    { ...base, event: "rpc", direction: "server_to_client", kind: "response", id: 1, method: "tools/call", tool: "echo", result: { content: [{ type: "text", text: "Echo: bench" }] } },
  ];
}

async function directCall(url: string): Promise<number> {
  const t0 = performance.now();
  const client = new Client({ name: "bench-direct", version: "1" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  const result = await client.callTool({ name: "echo", arguments: { message: "bench" } });
  await transport.terminateSession();
  await client.close();
  const ms = performance.now() - t0;
  if (JSON.stringify(result).indexOf("Echo: bench") < 0) throw new Error(`direct call answered ${JSON.stringify(result)}`);
  return ms;
}

export async function runReplay(tmp: string, opts: { rounds: number }): Promise<ReplayResult> {
  const m = await loadReplay();
  const echo = await startEchoServer();
  const url = new URL(echo.url);
  const records = capture(url);
  writeFileSync(path.join(tmp, "replay-capture.ndjson"), records.map((r) => JSON.stringify(r)).join("\n") + "\n", { mode: 0o600 });
  const call = m.findBySelector(records, `${FLOW}#1`);
  const proxyOptions = { caDir: path.join(tmp, "replay-ca"), logFile: path.join(tmp, "replay-records.ndjson"), upstreamCa: [], insecureUpstream: false };
  const replayOnce = async (): Promise<number> => {
    const t0 = performance.now();
    const result = await m.replayOverHttp({ transport: "streamable-http", url, headers: {}, replayOf: call.selector, timeoutMs: 10_000 }, m.sessionPlan(call, call.params), proxyOptions);
    const ms = performance.now() - t0;
    if (JSON.stringify(result.answer.message).indexOf("Echo: bench") < 0) throw new Error(`replay answered ${JSON.stringify(result.answer.message)}`);
    return ms;
  };
  try {
    // Warm-up: the CA is created, modules loaded, JIT warmed, on both sides.
    for (let i = 0; i < 3; i++) {
      await directCall(echo.url);
      await replayOnce();
    }
    const d: number[] = [];
    const r: number[] = [];
    for (let i = 0; i < opts.rounds; i++) {
      d.push(await directCall(echo.url));
      r.push(await replayOnce());
    }
    const direct = summarize(d);
    const replay = summarize(r);
    return {
      rounds: opts.rounds,
      direct,
      replay,
      addedMedianMs: direct.p50 === null || replay.p50 === null ? null : round(replay.p50 - direct.p50),
      how: "in-process: dist/replay/http-replay.js replayOverHttp (own proxy started and stopped, policy, records) vs SDK Client connect + callTool + terminateSession, fresh session each, taking turns",
    };
  } finally {
    await echo.close();
  }
}
