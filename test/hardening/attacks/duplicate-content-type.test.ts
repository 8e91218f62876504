/**
 * Two Content-Type header lines. Node keeps the first (`headers["content-type"]`), but the proxy forwards the
 * raw lines, and httpx joins them with ", ": `text/event-stream` then `text/event-stream; charset=utf-16le`
 * gave the proxy no charset doubt and httpx-sse a UTF-16LE stream, its secret unjudged. Enforce mode passes
 * no such response (nor request) of an MCP exchange on: receivers may read either line.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { AWS_KEY_ID } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });

/** The charset httpx reads a response in: the last `charset=` of its Content-Type lines joined with ", ". */
function httpxCharset(headers: Record<string, string | string[] | undefined>): string {
  const joined = [headers["content-type"] ?? []].flat().join(", ");
  return /charset=([\w-]+)/i.exec(joined)?.[1] ?? "utf-8";
}

describe("two Content-Type header lines (enforce mode)", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let nextId = 1500;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
  beforeAll(() => void ({ up, proxy, client, url } = scenario));

  for (const type of ["text/event-stream", "application/json"] as const) {
    it(`a ${type} response with a second line naming UTF-16LE: the client gets -32052 for its id, and the record says why`, async () => {
      const id = nextId++;
      up.route("POST", "/mcp", (req, res) => {
        const rid = (req.json as { id?: unknown }).id;
        const text = type === "text/event-stream" ? `event: message\ndata: ${leak(rid)}\n\n` : leak(rid);
        // UTF-8 to the proxy (the first line), UTF-16LE to httpx: the same bytes must read the same either way
        // for the attack, so the body is UTF-16LE and the proxy sees no message in it.
        res.writeHead(200, ["content-type", type, "content-type", `${type}; charset=utf-16le`]);
        res.end(Buffer.from(text, "utf16le"));
      });
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      const read = new TextDecoder(httpxCharset(res.headers)).decode(res.body);
      expect(read).not.toContain(AWS_KEY_ID.slice(8));
      expect(res.json).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32052 } });
      const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "server_to_client" && JSON.stringify(r).includes("2 Content-Type header lines"));
      expect(rec.decision).toMatchObject({ action: "deny", enforced: true });
    });
  }

  it("a request with two Content-Type lines is not forwarded: the client is refused, and the record says why", async () => {
    const id = nextId++;
    const before = up.requests.length;
    const res = await client.post(url, JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: {} } }), {
      "content-type": ["application/json", "application/json; charset=utf-16le"],
    });
    expect(up.requests.length).toBe(before);
    expect(res.status === 400 || (res.json as { error?: { code?: number } } | undefined)?.error?.code === -32052).toBe(true);
    const rec = await proxy.waitForRecord((r) => JSON.stringify(r).includes("2 Content-Type header lines"));
    expect(rec).toBeDefined();
  });
});
