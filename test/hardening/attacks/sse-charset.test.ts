/**
 * An event stream labelled with a charset other than UTF-8. EventSource always reads UTF-8, but httpx-sse
 * (the Python MCP SDK's client) decodes the stream with the response's charset. The proxy read the stream
 * as UTF-8 only: UTF-16 has no `data:` line nor blank line for it, so nothing was judged and the stream went
 * to the client as received, a secret in it unjudged and unrecorded.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });

describe("an event stream under a non-UTF-8 charset (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let nextId = 900;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
  beforeAll(() => void ({ mcp, proxy, client, url } = scenario));
  beforeEach(() => mcp.setScript(defaultScript));

  for (const charset of ["utf-16le", "utf-16be"] as const) {
    it(`charset=${charset}: the client never reads the key, and the proxy says why`, async () => {
      const id = nextId++;
      const encode = (s: string): Buffer => (charset === "utf-16le" ? Buffer.from(s, "utf16le") : Buffer.from(s, "utf16le").swap16());
      // Three events with a line the proxy's reader calls invalid use up the problems it reports one by one
      // (each is dropped); the UTF-16 rest has no blank line for a UTF-8 reader: judged at the end as a tail.
      const junk = Buffer.from("x\n\n".repeat(3));
      mcp.setScript((m) => ({ kind: "raw", body: Buffer.concat([junk, encode(`\n\nevent: message\ndata: ${leak(m.id)}\n\n`)]), headers: { "content-type": `text/event-stream; charset=${charset}` } }));
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      // What httpx-sse reads: the stream decoded with its charset.
      const read = new TextDecoder(charset).decode(res.body);
      expect(read).not.toContain(AWS_KEY_ID.slice(8));
      const records = await proxy.records();
      expect(records.some((r) => r.event === "rpc" && r.direction === "server_to_client" && (r.decision as { action?: string } | undefined)?.action === "deny")).toBe(true);
    });
  }

  it("an ASCII stream labelled charset=iso-8859-1 reads the same either way: passed on as received", async () => {
    const id = nextId++;
    const clean = (i: unknown): string => `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: i, result: { content: [] } })}\n\n`;
    mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(clean(m.id)), headers: { "content-type": "text/event-stream; charset=iso-8859-1" } }));
    const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
    expect(res.text).toBe(clean(id));
  });

  it("a result with non-ASCII text labelled charset=iso-8859-1: the client gets -32052 for its id, recorded as denied", async () => {
    const id = nextId++;
    const result = (i: unknown): string => JSON.stringify({ jsonrpc: "2.0", id: i, result: { content: [{ type: "text", text: "café" }] } });
    mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(`event: message\ndata: ${result(m.id)}\n\n`), headers: { "content-type": "text/event-stream; charset=iso-8859-1" } }));
    const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
    const data = res.text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as unknown);
    expect(data).toEqual([{ jsonrpc: "2.0", id, error: expect.objectContaining({ code: -32052 }) }]);
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === id && r.direction === "server_to_client");
    expect(rec.decision).toMatchObject({ action: "deny", enforced: true });
    expect(JSON.stringify(rec.decision)).toContain("iso-8859-1");
  });
});
