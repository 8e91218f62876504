import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { parseReverseSpec } from "../../src/proxy/reverse.js";

let upstream: McpUpstream;
let proxy: TestProxy;

beforeAll(async () => {
  upstream = await startMcpUpstream();
  proxy = await startTestProxy({ reverse: [`:0=${upstream.url}`, `/everything=${upstream.url}`] });
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

const upstreamServer = (): string => `127.0.0.1:${upstream.port}`;

describe("reverse mode", () => {
  it("serves the upstream on a port of its own to the SDK client (Streamable HTTP), with the same records", async () => {
    const local = `http://127.0.0.1:${proxy.reversePorts[0]}/mcp`;
    const c = await connectStreamable(local);
    const result = await c.client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
    expect(JSON.stringify(result)).toContain("5");
    await c.close();
    const call = await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "response" && r.tool === "get-sum");
    expect(call).toMatchObject({ server: upstreamServer(), transport: "streamable-http", path: "/mcp", method: "tools/call" });
    expect(typeof call.latencyMs).toBe("number");
    const http = await proxy.waitForRecord((r) => r.event === "http" && r.flow === call.flow);
    expect(http).toMatchObject({ mode: "reverse", status: 200 });
    // The record keeps the client's request head as the client sent it.
    expect((http.requestHeaders as Record<string, string>).host).toBe(`127.0.0.1:${proxy.reversePorts[0]}`);
  });

  it("serves the legacy HTTP+SSE transport on its own port (the endpoint URL stays valid)", async () => {
    const c = await connectSse(`http://127.0.0.1:${proxy.reversePorts[0]}/sse`);
    const result = await c.client.callTool({ name: "echo", arguments: { message: "through reverse" } });
    expect(JSON.stringify(result)).toContain("through reverse");
    await c.close();
    const answer = await proxy.waitForRecord((r) => r.event === "rpc" && r.transport === "http+sse" && r.kind === "response" && r.tool === "echo");
    expect(answer.server).toBe(upstreamServer());
  });

  it("serves an upstream under a path prefix of the proxy's own port", async () => {
    const c = await connectStreamable(`${proxy.url}/everything/mcp`);
    const tools = await c.client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain("echo");
    await c.close();
    const list = await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "response" && r.method === "tools/list" && r.path === "/mcp");
    expect(list.server).toBe(upstreamServer());
  });
});

describe("--reverse specs", () => {
  it("refuses credentials in the upstream URL without repeating them", () => {
    for (const spec of ["https://alice:s3cret-pw@example.com", ":9000=https://alice:s3cret-pw@example.com", "/x=https://alice:s3cret-pw@exa mple.com"]) {
      let message = "";
      try {
        parseReverseSpec(spec);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^--reverse .*\[redacted\]@/);
      expect(message).not.toContain("s3cret-pw");
    }
  });
});
