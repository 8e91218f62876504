/**
 * A JSON answer whose Content-Type holds bytes past printable ASCII. node reads header bytes as latin-1, httpx
 * as UTF-8 when they are valid UTF-8: `application/json;` C2 85 `charset=utf-7` is `;Â<NEL>charset=utf-7` to
 * the proxy (no charset) and `;<NEL>charset=utf-7` to httpx, whose email.message strips NEL as a space: a
 * client decoding the body with its charset (httpx's `response.text`) reads UTF-7, and `+AEEASwBJ...-` is a
 * key the proxy never saw. The event-stream rule (header-bytes, sse-charset) held only for event streams.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

/** UTF-7 of `text`: one shifted run of UTF-16BE in base64 (no padding), closed with `-`. */
const utf7 = (text: string): string => `+${Buffer.from(text, "utf16le").swap16().toString("base64").replace(/=+$/, "")}-`;

describe("a JSON answer whose Content-Type holds bytes past printable ASCII (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let nextId = 4100;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
  beforeAll(() => void ({ mcp, proxy, client, url } = scenario));
  beforeEach(() => mcp.setScript(defaultScript));

  for (const [name, type] of [
    ["NEL (C2 85) before charset=utf-7", "application/json;\xc2\x85charset=utf-7"],
    ["a latin-1 NEL (85) before charset=utf-7", "application/json;\x85charset=utf-7"],
  ] as const) {
    it(`${name}: the key hidden in UTF-7 never reaches the client; the answer is refused with a record`, async () => {
      const id = nextId++;
      mcp.setScript((m) => {
        const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: `key ${utf7(AWS_KEY_ID)}` }] } }));
        return { kind: "raw", body, headers: { "content-type": type, "content-length": String(body.length) } };
      });
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      expect(res.text).not.toContain(utf7(AWS_KEY_ID));
      expect(res.json).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32052 } });
      const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "server_to_client" && (r.decision as { action?: string } | undefined)?.action === "deny" && (r.id === id || JSON.stringify(r).includes("past printable ASCII")));
      expect(rec.decision).toMatchObject({ action: "deny", enforced: true });
    });
  }

  it("a plain ASCII JSON answer still passes as received", async () => {
    const id = nextId++;
    const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ jsonrpc: "2.0", id });
  });
});
