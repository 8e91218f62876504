/**
 * The standalone GET stream of a session, under a content type that only a prefix test takes for an event
 * stream (`text/event-streamx`: httpx-sse wants "text/event-stream" in it). The proxy reads the stream as
 * not MCP and passes it through: a server request the policy denies (here: sampling) reaches the client.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ProxyAgent, request } from "undici";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const sampling = `{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}`;

describe("a session's GET stream under text/event-streamx (enforce mode)", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  const scenario = wireScenario(`mode: enforce\nrules:\n  - { name: no-sampling, action: deny, match: { method: sampling/createMessage } }\n`);
  beforeAll(() => void ({ up, proxy } = scenario));

  for (const type of ["text/event-stream", "text/event-streamx"]) {
    it(`${type}: the denied server request never reaches the client`, async () => {
      up.route("GET", "/mcp", (_req, res) => {
        res.writeHead(200, { "content-type": type });
        res.end(`event: message\ndata: ${sampling}\n\n`);
      });
      const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
      let text = "";
      try {
        const res = await request(`${up.url}/mcp`, { method: "GET", dispatcher: agent, headers: { accept: "text/event-stream", "mcp-session-id": "sess-1", "mcp-protocol-version": "2025-06-18" } });
        text = await res.body.text();
      } finally {
        await agent.destroy();
      }
      expect(text).not.toContain("sampling/createMessage");
    });
  }
});
