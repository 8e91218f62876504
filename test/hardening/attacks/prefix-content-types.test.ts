/**
 * An answer to an MCP POST under a content type the proxy does not take for JSON or an event stream, that a
 * client's prefix test does: the Python SDK reads `content_type.startswith("application/json")` as JSON
 * and `startswith("text/event-stream")` as a stream (httpx-sse only wants "text/event-stream" in it).
 * Enforce mode passed such a body on unjudged (the one record, "not JSON or an event stream", came after
 * the client had it): a secret in it reached the client.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });

const CASES: [string, (id: unknown) => string][] = [
  ["application/jsonx", (id) => leak(id)],
  ["application/json-rpc", (id) => leak(id)],
  ["text/event-streamx", (id) => `event: message\ndata: ${leak(id)}\n\n`],
  ["text/event-stream-v2; charset=utf-8", (id) => `event: message\ndata: ${leak(id)}\n\n`],
];

describe("an answer under a content type a client reads by its prefix (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let nextId = 1200;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
  beforeAll(() => void ({ mcp, proxy, client, url } = scenario));
  beforeEach(() => mcp.setScript(defaultScript));

  for (const [type, body] of CASES) {
    it(`${type}: the client never reads the key, and the proxy says why`, async () => {
      const id = nextId++;
      mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(body(m.id)), headers: { "content-type": type } }));
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      expect(res.text).not.toContain(AWS_KEY_ID.slice(8));
      const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "server_to_client" && r.kind === "invalid" && String(r.reason).includes(type.split(";")[0]!), { what: "the refused answer's record" });
      expect(rec).toMatchObject({ decision: { action: "deny", enforced: true } });
    });
  }
});
