/**
 * The members that identify a message (id, method, tool, sseEventId, progressToken) are never masked by shape
 * in records, so that a peer cannot erase them. But a peer chooses them too: a token as a request id, a method
 * or tool name, an SSE event id or a progress token was written to the rpc record in clear.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

/** Built at run time: no complete credential in the source. */
const TOKEN = ["ghp_", "k3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVi"].join("");

describe("secrets in the members that identify a message", () => {
  let proxy: TestProxy;
  let client: WireClient;
  let mcp: ScriptedMcp;
  let url: string;
  const scenario = wireScenario("mode: monitor\n");
  beforeAll(() => void ({ proxy, client, url, mcp } = scenario));

  /** The log lines written since `from` (each test its own). */
  let from = 0;
  const logged = (): string => {
    const all = readFileSync(proxy.logFile, "utf8");
    const mine = all.slice(from);
    from = all.length;
    return mine;
  };

  it("a token as a request id", async () => {
    await client.post(url, { jsonrpc: "2.0", id: `req-${TOKEN}`, method: "tools/list" });
    await proxy.waitForRecord((r) => r.event === "rpc" && r.method === "tools/list" && r.direction === "server_to_client", { what: "the response record" });
    expect(logged()).not.toContain(TOKEN.slice(4));
  });

  it("a token as a method and as a tool name", async () => {
    await client.post(url, { jsonrpc: "2.0", id: 31, method: `x/${TOKEN}`, params: {} });
    await client.post(url, { jsonrpc: "2.0", id: 32, method: "tools/call", params: { name: TOKEN, arguments: {} } });
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 32 && r.direction === "server_to_client", { what: "the response record" });
    expect(logged()).not.toContain(TOKEN.slice(4));
    // Still identified: the method as sent, the tool masked in place.
    expect(rec).toMatchObject({ method: "tools/call", tool: expect.stringContaining("[redacted: github_token]") });
  });

  it("a token as an SSE event id and as a progress token", async () => {
    mcp.setScript((m) => ({
      kind: "raw",
      body: Buffer.from(`id: ${TOKEN}\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [] } })}\n\n`),
      headers: { "content-type": "text/event-stream" },
    }));
    await client.post(url, { jsonrpc: "2.0", id: 33, method: "tools/call", params: { name: "echo", arguments: {}, _meta: { progressToken: `p-${TOKEN}` } } });
    await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 33 && r.direction === "server_to_client", { what: "the response record" });
    expect(logged()).not.toContain(TOKEN.slice(4));
  });
});
