/**
 * Event-stream answers that an enforce-mode client used to receive unjudged, each carrying a tool result
 * with an AWS key: the stream ending mid-event (CR-only line ends whose last blank line is a lone CR, no
 * final blank line, no final line end at all), which a reader that dispatches what it holds at the end
 * still reads as an event; and a JSON-RPC answer sent as `event: endpoint`, which the proxy took for a
 * legacy endpoint URL while a reader that ignores event names reads it as the answer. Ordinary CR-only,
 * BOM-led streams are judged as before; a key split over two `data:` lines makes the event invalid JSON
 * (a raw line end inside a string): dropped.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LogRecord, TestProxy } from "../../helpers/proxy-harness.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const RULES = `mode: enforce
detectors: { secrets: deny }
`;

const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });

/** The third member: the event is not JSON-RPC at all for the proxy (dropped, with no response record). */
const CASES: [string, (id: unknown) => string, boolean?][] = [
  ["CR-only line ends, the stream ending on the closing CR", (id) => `event: message\rdata: ${leak(id)}\r\r`],
  ["no blank line before the end", (id) => `data: ${leak(id)}\n`],
  ["no line end at all", (id) => `data: ${leak(id)}`],
  ["a JSON-RPC answer named event: endpoint", (id) => `event: endpoint\ndata: ${leak(id)}\n\n`],
  ["CR-only line ends, then more", (id) => `data: ${leak(id)}\r\r: ping\r\r`],
  ["a byte order mark first", (id) => `\ufeffdata: ${leak(id)}\n\n`],
  ["the key split over two data lines", (id) => { const t = leak(id); const k = t.indexOf(AWS_KEY_ID) + 8; return `data: ${t.slice(0, k)}\ndata: ${t.slice(k)}\r\n\r\n`; }, true],
];

describe("event streams that end mid-event or mislabel an answer (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let nextId = 700;
  const scenario = wireScenario(RULES);
  beforeAll(() => void ({ mcp, proxy, client, url } = scenario));
  beforeEach(() => mcp.setScript(defaultScript));

  for (const [name, stream, notJson] of CASES) {
    it(`${name}: the client never reads the key`, async () => {
      const id = nextId++;
      mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(stream(m.id)), headers: { "content-type": "text/event-stream" } }));
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      expect(res.text).not.toContain(AWS_KEY_ID.slice(8));
      if (notJson) return;
      expect(res.text).toContain("-32051");
      const rec = await proxy.waitForRecord((r: LogRecord) => r.event === "rpc" && r.id === id && r.direction === "server_to_client", { what: "the answer's record" });
      expect(rec).toMatchObject({ kind: "response", method: "tools/call", decision: { action: "deny", enforced: true } });
    });
  }

  it("an allowed answer at the end of a stream without its blank line is passed on as received", async () => {
    const id = nextId++;
    const clean = (i: unknown): string => `data: ${JSON.stringify({ jsonrpc: "2.0", id: i, result: { content: [] } })}\n`;
    mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(clean(m.id)), headers: { "content-type": "text/event-stream" } }));
    const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
    expect(res.text).toBe(clean(id));
  });
});
