/**
 * The smuggling class against the official MCP server (server-everything over Streamable HTTP, behind real
 * TLS), in enforce mode: a session is opened through the proxy, then a GET carries, as its chunked body, a
 * complete POST of a denied tool call on that session. The server must never run the tool; the proxy must
 * record what the server received.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpUpstream, type McpUpstream } from "../../helpers/mcp-upstream.js";
import { openTunnel, parseRawResponse, readAll, startTestProxy, tlsThroughTunnel, type TestProxy } from "../../helpers/proxy-harness.js";
import { tempDir, writePolicyFile } from "../../policy/policy-fixtures.js";

const POLICY = `mode: enforce
rules:
  - name: no-sum
    action: deny
    match: { tool: get-sum }
`;

describe("request smuggling against the official MCP server (enforce mode)", () => {
  let upstream: McpUpstream;
  let proxy: TestProxy;
  let tmp: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    tmp = tempDir();
    upstream = await startMcpUpstream();
    proxy = await startTestProxy({ config: writePolicyFile(tmp.dir, POLICY) });
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
    tmp?.cleanup();
  });

  /** One raw request on a fresh tunnel (it must close the connection); returns the raw answer. */
  async function send(raw: string): Promise<Buffer> {
    const { socket } = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    const done = readAll(secure);
    secure.write(raw);
    return done;
  }

  const host = (): string => `127.0.0.1:${upstream.port}`;
  const post = (body: object, session?: string): string => {
    const text = JSON.stringify(body);
    return (
      `POST /mcp HTTP/1.1\r\nHost: ${host()}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `Mcp-Protocol-Version: 2025-06-18\r\n${session ? `Mcp-Session-Id: ${session}\r\n` : ""}Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`
    );
  };

  it("a GET whose chunked body is a denied tools/call never runs the tool", async () => {
    const init = parseRawResponse(
      await send(post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } })),
    );
    expect(init.status).toBe(200);
    const session = init.headers["mcp-session-id"]!;
    expect(session).toBeTruthy();
    parseRawResponse(await send(post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)));

    const hidden = post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get-sum", arguments: { a: 1, b: 2 } } }, session);
    const smuggle = `GET /mcp HTTP/1.1\r\nHost: ${host()}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${hidden.length.toString(16)}\r\n${hidden}\r\n0\r\n\r\n`;
    await send(smuggle);
    await proxy.waitForRecord((r) => r.event === "http" && r.method === "GET" && r.path === "/mcp");
    // Give a smuggled request time to arrive and run, were it ever forwarded.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(upstream.counters.toolCallsByName.get("get-sum")).toBeUndefined();

    // The same call sent openly is refused by policy: the session works and the rule applies.
    const open = parseRawResponse(await send(post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "get-sum", arguments: { a: 1, b: 2 } } }, session)));
    expect(open.body.toString()).toContain("blocked by mcp-wiretap policy");
    expect(upstream.counters.toolCallsByName.get("get-sum")).toBeUndefined();
  });
});
