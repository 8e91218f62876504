/**
 * An SSE event larger than --max-inspect-bytes used to pass unjudged in enforce mode (an `invalid` record said
 * so): a server that pads its answer past the limit (whitespace inside the JSON, or a long `data:` line)
 * delivered a key the secrets detector denies, or a tool result a rule denies. Enforce mode now drops such an
 * event; the requests of its exchange still unanswered get -32052 instead.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const LIMIT = 4096;

const padded = (id: unknown): string =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},${" ".repeat(LIMIT * 2)}"result":{"content":[{"type":"text","text":"key ${AWS_KEY_ID}"}]}}`;

describe("an SSE event larger than --max-inspect-bytes (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let up: ScriptedUpstream;
  let nextId = 2100;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`, { maxInspectBytes: LIMIT });
  beforeAll(() => {
    ({ mcp, proxy, client, url, up } = scenario);
    // The same answer written in 500-byte pieces, a few milliseconds apart.
    up.route("POST", "/chunked", async (req, res) => {
      const rid = (req.json as { id?: unknown }).id;
      res.writeHead(200, { "content-type": "text/event-stream" });
      const body = Buffer.from(`event: message\ndata: ${padded(rid)}\n\n`);
      for (let i = 0; i < body.length; i += 500) {
        res.write(body.subarray(i, i + 500));
        await new Promise((r) => setTimeout(r, 2));
      }
      res.end();
    });
  });
  beforeEach(() => mcp.setScript(defaultScript));

  for (const [name, chunked] of [["in one chunk", false], ["in many chunks", true]] as const) {
    it(`a padded answer carrying a key, ${name}: the client never reads the key and gets -32052 for its id`, async () => {
      const id = nextId++;
      mcp.setScript((m) => {
        const body = Buffer.from(`event: message\ndata: ${padded(m.id)}\n\n`);
        return { kind: "raw", body, headers: { "content-type": "text/event-stream" } };
      });
      const res = await client.post(chunked ? `${up.url}/chunked` : url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      expect(res.text).not.toContain(AWS_KEY_ID.slice(8));
      expect(res.text).toContain("-32052");
      const rec = await proxy.waitForRecord((r) => r.event === "rpc" && JSON.stringify(r).includes("larger than --max-inspect-bytes"), { what: "the oversized event's record" });
      expect(rec).toMatchObject({ decision: { action: "deny", enforced: true } });
    });
  }

  it("a small allowed answer after a large comment is still passed on", async () => {
    const id = nextId++;
    mcp.setScript((m) => ({
      kind: "raw",
      body: Buffer.from(`: ${"x".repeat(LIMIT * 2)}\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [] } })}\n\n`),
      headers: { "content-type": "text/event-stream" },
    }));
    const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
    expect(res.text).toContain(`"id":${id},"result"`);
  });
});
