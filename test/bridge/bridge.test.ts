/**
 * The SDK's stdio client through `mcp-wiretap bridge` to server-everything over TLS (Streamable HTTP): the
 * same answers as a direct connection, and records as `start` writes them, with the header's secret nowhere.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { assertBuilt, CLI_MAIN, NODE_BIN } from "../helpers/proxy-harness.js";
import { tempDir } from "../helpers/stdio-shim.js";
import { writeTempFile } from "../helpers/test-pki.js";
import { waitUntil } from "../helpers/wait-until.js";

let upstream: McpUpstream;
beforeAll(async () => {
  upstream = await startMcpUpstream();
});
afterAll(async () => {
  await upstream?.close();
});

/** What a client sees of a session: tools, a call's answer, a prompt, a resource. */
async function session(client: Client): Promise<unknown> {
  const tools = await client.listTools();
  const echo = await client.callTool({ name: "echo", arguments: { message: "over the bridge" } });
  const sum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 40 } });
  const prompts = await client.listPrompts();
  return { tools: tools.tools.map((t) => t.name).sort(), echo, sum, prompts: prompts.prompts.map((p) => p.name).sort(), server: client.getServerVersion() };
}

describe("mcp-wiretap bridge", () => {
  it("the stdio client gets the answers it gets directly; every message is recorded as by start", async () => {
    assertBuilt();
    const dir = tempDir("mcp-wiretap-bridge-");
    const log = path.join(dir, "bridge.ndjson");
    const secret = ["s3cr3t", "bridge", "token"].join("-");

    const direct = await connectStreamable(upstream.streamableUrl, { caPem: upstream.caPem });
    const expected = await session(direct.client);
    await direct.close();

    const transport = new StdioClientTransport({
      command: NODE_BIN,
      args: [CLI_MAIN, "bridge", upstream.streamableUrl, "--header", "Authorization: Bearer ${BRIDGE_TOKEN}", "--log-file", log, "--ca-dir", path.join(dir, "ca"), "--upstream-ca", writeTempFile(upstream.caPem, "upstream-ca.pem")],
      env: { PATH: process.env.PATH ?? "", BRIDGE_TOKEN: secret },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const client = new Client({ name: "bridge-test-client", version: "1.0.0" });
    await client.connect(transport, { timeout: 30_000 });
    expect(await session(client)).toEqual(expected);
    await client.close();

    let records: Array<Record<string, unknown>> = [];
    await waitUntil(
      () => {
        records = readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
        return records.some((r) => r.event === "stop" || r.event === "shutdown") || records.filter((r) => r.event === "rpc").length >= 10;
      },
      { timeoutMs: 15_000, what: "the bridge's records" },
    );
    const rpc = records.filter((r) => r.event === "rpc");
    const server = new URL(upstream.streamableUrl).host;
    const calls = rpc.filter((r) => r.method === "tools/call" && r.kind === "request");
    expect(calls.map((r) => r.tool)).toEqual(["echo", "get-sum"]);
    for (const r of rpc) expect(r).toMatchObject({ server, transport: expect.stringMatching(/streamable/) });
    const http = records.filter((r) => r.event === "http");
    expect(http.length).toBeGreaterThan(0);
    for (const h of http) {
      expect(h.tls).toMatchObject({ server: expect.stringMatching(/^TLS/) });
      expect((h.requestHeaders as Record<string, string>).authorization).toBe("Bearer [redacted]");
    }
    expect(readFileSync(log, "utf8")).not.toContain(secret);
    expect(stderr).not.toContain(secret);
  });
});

describe("mcp-wiretap bridge --transport sse", () => {
  it("legacy HTTP+SSE: the same answers as directly, every message recorded", async () => {
    const dir = tempDir("mcp-wiretap-bridge-sse-");
    const log = path.join(dir, "bridge.ndjson");
    const direct = await connectSse(upstream.sseUrl, { caPem: upstream.caPem });
    const expected = await session(direct.client);
    await direct.close();

    const transport = new StdioClientTransport({
      command: NODE_BIN,
      args: [CLI_MAIN, "bridge", "--transport", "sse", upstream.sseUrl, "--log-file", log, "--ca-dir", path.join(dir, "ca"), "--upstream-ca", writeTempFile(upstream.caPem, "upstream-ca.pem")],
      env: { PATH: process.env.PATH ?? "" },
      stderr: "pipe",
    });
    const client = new Client({ name: "bridge-test-client", version: "1.0.0" });
    await client.connect(transport, { timeout: 30_000 });
    expect(await session(client)).toEqual(expected);
    await client.close();
    let rpc: Array<Record<string, unknown>> = [];
    await waitUntil(
      () => {
        rpc = readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.event === "rpc");
        return rpc.filter((r) => r.method === "tools/call" && r.kind === "response").length === 2;
      },
      { timeoutMs: 15_000, what: "the bridge's records" },
    );
    for (const r of rpc) expect(r).toMatchObject({ server: new URL(upstream.sseUrl).host, transport: expect.stringMatching(/sse/) });
  });
});
