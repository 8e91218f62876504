/**
 * Enforce mode and long messages (scanned in slices, judged later than short ones): a long message is still
 * judged before any of it is forwarded. A secret at the end of a 1 MB request never reaches the server; one
 * at the end of a 1 MB answer (JSON or an SSE event) never reaches the client.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "./scripted-server.js";
import type { WireClient } from "./wire-client.js";
import { wireScenario } from "./wire-scenario.js";

const LONG = "lorem ipsum dolor sit amet ".repeat(40_000);

describe("long messages in enforce mode", () => {
  let up: ScriptedUpstream;
  let mcp: ScriptedMcp;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario("mode: enforce\ndetectors: { secrets: deny }\n");
  beforeAll(() => void ({ up, mcp, client, url } = scenario));
  beforeEach(() => mcp.setScript(defaultScript));

  it("a long request with a secret at its end is refused, never forwarded", async () => {
    const before = up.requests.length;
    const res = await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: `${LONG} ${AWS_KEY_ID}` } } });
    expect(up.requests.length).toBe(before);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: expect.any(Number) } });
  });

  for (const sse of [false, true]) {
    it(`a long ${sse ? "SSE event" : "JSON answer"} with a secret at its end never reaches the client`, async () => {
      mcp.setScript((m) => {
        const value = { jsonrpc: "2.0", id: (m as { id: number }).id, result: { content: [{ type: "text", text: `${LONG} ${AWS_KEY_ID}` }] } };
        return sse ? { kind: "raw", body: Buffer.from(`event: message\ndata: ${JSON.stringify(value)}\n\n`), headers: { "content-type": "text/event-stream" } } : { kind: "json", value };
      });
      const res = await client.post(url, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "lookup", arguments: {} } });
      expect(res.text).not.toContain(AWS_KEY_ID);
      expect(res.text).not.toContain("lorem ipsum");
      expect(res.text).toContain('"id":2');
    });
  }
});
