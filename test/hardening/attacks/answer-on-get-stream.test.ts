/**
 * A server that answers a request's POST with `202 Accepted` and sends the response later on the session's
 * GET stream. The TypeScript SDK client takes a 202 as "nothing here yet" and reads the response from any of
 * the session's streams. The proxy gave the request up when its POST ended ("stream ended without a
 * response") and then read the answer as a response to no request: judged without its method and tool, so a
 * rule on the tool's results (and tool pinning, for a tools/list) never applied; enforce mode passed it on.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ProxyAgent, request } from "undici";
import { accepted, sseHead, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const HEADERS = { "mcp-session-id": "sess-late", "mcp-protocol-version": "2025-06-18" };

describe("a tool result sent on the GET stream after its POST got 202 (enforce mode)", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario(`mode: enforce\nrules:\n  - { name: no-read-results, action: deny, match: { tool: read_file, direction: server_to_client } }\n`);
  beforeAll(() => void ({ up, proxy, client, url } = scenario));

  it("the denied result never reaches the client, and its record names the call it answers", async () => {
    up.route("POST", "/mcp", (_req, res) => accepted(res));
    up.route("GET", "/mcp", (_req, res) => {
      sseHead(res);
      res.end(`event: message\ndata: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"SECRET-CONTENTS"}]}}\n\n`);
    });
    await client.post(url, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read_file", arguments: {} } }, HEADERS);
    await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "unanswered" && r.id === 7, { what: "the call given up" });
    const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
    let text = "";
    try {
      const res = await request(url, { method: "GET", dispatcher: agent, headers: { accept: "text/event-stream", ...HEADERS } });
      text = await res.body.text();
    } finally {
      await agent.destroy();
    }
    const answer = await proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "server_to_client" && r.id === 7, { what: "the late answer" });
    expect(answer).toMatchObject({ method: "tools/call", tool: "read_file", decision: { action: "deny" } });
    expect(text).not.toContain("SECRET-CONTENTS");
  });
});
