/**
 * `mcp-wiretap mock`: the official SDK client records server-everything through the proxy, then gets the
 * same tools/list and call results from the mock, over stdio and over Streamable HTTP.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream } from "../helpers/mcp-upstream.js";
import { CLI_MAIN, NODE_BIN, REPO_ROOT, spawnCli, startTestProxy, type SpawnedCli } from "../helpers/proxy-harness.js";

interface Seen {
  tools: unknown;
  echo: unknown;
  sum: unknown;
  long: unknown;
  progress: number[];
}

let dir: string;
let capture: string;
let recorded: Seen;

async function scenario(client: Client): Promise<Seen> {
  const progress: number[] = [];
  return {
    tools: (await client.listTools()).tools,
    echo: await client.callTool({ name: "echo", arguments: { message: "hello" } }),
    sum: await client.callTool({ name: "get-sum", arguments: { a: 40, b: 2 } }),
    long: await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 } }, undefined, { onprogress: (p) => progress.push(p.progress), timeout: 15_000 }),
    progress,
  };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-mock-"));
  capture = path.join(dir, "capture.ndjson");
  const upstream = await startMcpUpstream();
  const proxy = await startTestProxy({ logFile: capture, caDir: path.join(dir, "ca") });
  try {
    const s = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    recorded = await scenario(s.client);
    await s.close();
  } finally {
    await proxy.stop("captured");
    await upstream.close();
  }
}, 60_000);

afterAll(() => {
  if (dir && !process.env.KEEP_MOCK) rmSync(dir, { recursive: true, force: true });
});

async function stdioMock(args: string[] = []): Promise<{ client: Client; close(): Promise<void> }> {
  const transport = new StdioClientTransport({ command: NODE_BIN, args: [CLI_MAIN, "mock", capture, "--stdio", "--speed", "0", ...args], cwd: REPO_ROOT, stderr: "pipe" });
  const client = new Client({ name: "mock-test", version: "1" });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

describe("mock over stdio", () => {
  it("gives the SDK client the recorded tools/list, call results and progress", async () => {
    const mock = await stdioMock();
    try {
      expect(mock.client.getServerVersion()).toMatchObject({ name: "mcp-servers/everything" });
      expect(await scenario(mock.client)).toEqual(recorded);
    } finally {
      await mock.close();
    }
  }, 30_000);

  it("replays every recorded progress with the client's token and id, timing scaled by --speed", async () => {
    const { spawn } = await import("node:child_process");
    const child = spawn(NODE_BIN, [CLI_MAIN, "mock", capture, "--stdio", "--speed", "4"], { cwd: REPO_ROOT, stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const answered = (id: string) => new Promise<void>((resolve) => {
      const check = (): void => void (out.includes(`"id":"${id}"`) && resolve());
      child.stdout.on("data", check);
      check();
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: "init", method: "ping" })}\n`);
    await answered("init");
    out = "";
    const started = Date.now();
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: "call-1", method: "tools/call", params: { name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 }, _meta: { progressToken: "tok" } } })}\n`);
    await answered("call-1");
    const elapsed = Date.now() - started;
    child.stdin.end();
    const lines = out.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => (l.method as string | undefined) ?? `answer ${String(l.id)}`)).toEqual(["notifications/progress", "notifications/progress", "answer call-1"]);
    expect(lines.slice(0, 2).map((l) => l.params)).toEqual(recorded.progress.map((progress) => ({ progress, total: 2, progressToken: "tok" })));
    // Recorded over about a second: a quarter of it here.
    expect(elapsed).toBeGreaterThanOrEqual(200);
    expect(elapsed).toBeLessThan(900);
  }, 20_000);

  it("an unmatched call names the nearest recorded call and the argument paths that differ; --match tool answers it", async () => {
    const exact = await stdioMock();
    try {
      await expect(exact.client.callTool({ name: "echo", arguments: { message: "not recorded" } })).rejects.toThrow(/nearest recorded call: tools\/call echo \([0-9a-f-]+#\d+\), differing at arguments\.message/);
    } finally {
      await exact.close();
    }
    const byTool = await stdioMock(["--match", "tool"]);
    try {
      expect(await byTool.client.callTool({ name: "echo", arguments: { message: "not recorded" } })).toEqual(recorded.echo);
    } finally {
      await byTool.close();
    }
  }, 30_000);
});

describe("mock over Streamable HTTP", () => {
  let cli: SpawnedCli;
  let url: string;
  beforeAll(async () => {
    cli = spawnCli(["mock", capture, "--port", "0", "--speed", "0"]);
    url = (await cli.waitForStderr(/at (http:\/\/127\.0\.0\.1:\d+\/mcp)/, 15_000))[1]!;
  }, 20_000);
  afterAll(() => cli?.kill());

  it("gives the SDK client the recorded tools/list, call results and progress", async () => {
    const c = await connectStreamable(url);
    try {
      expect(await scenario(c.client)).toEqual(recorded);
    } finally {
      await c.close();
    }
  }, 30_000);

  it("refuses a page on another origin and a rebinding Host", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const post = async (extra: Record<string, string>): Promise<number> => {
      const res = await request(url, { method: "POST", headers: { ...headers, ...extra }, body });
      await res.body.dump();
      return res.statusCode;
    };
    expect(await post({})).toBe(200);
    expect(await post({ origin: "https://evil.example" })).toBe(403);
    expect(await post({ host: "attacker.example" })).toBe(403);
  });
});

describe("mock over legacy HTTP+SSE (--legacy)", () => {
  let cli: SpawnedCli;
  let url: string;
  beforeAll(async () => {
    cli = spawnCli(["mock", capture, "--legacy", "--port", "0", "--speed", "0"]);
    url = (await cli.waitForStderr(/at (http:\/\/127\.0\.0\.1:\d+\/sse)/, 15_000))[1]!;
  }, 20_000);
  afterAll(() => cli?.kill());

  it("gives the SDK client the recorded tools/list, call results and progress", async () => {
    const c = await connectSse(url);
    try {
      expect(await scenario(c.client)).toEqual(recorded);
    } finally {
      await c.close();
    }
  }, 30_000);
});
