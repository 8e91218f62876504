/**
 * A replaced SSE event (a denied answer turned into its error) keeps the original event's `id:` so resumption
 * still works. The id was copied as received: an id holding U+2028 (or VT, FF, ... or, under a Latin-1 label,
 * the 0x85 of "Å") made its own event to httpx, which splits lines as str.splitlines() does. A server that
 * put a whole event with a key in the id of a denied answer had it delivered in the proxy's own replacement.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";
import { leak, pythonEvents } from "./python-sse-reader.js";

describe("the id of a replaced SSE event (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let client: WireClient;
  let url: string;
  let nextId = 2300;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\nrules:\n  - { name: no-lookup-answers, action: deny, match: { tool: lookup, kind: response } }\n`);
  beforeAll(() => void ({ mcp, client, url } = scenario));
  beforeEach(() => mcp.setScript(defaultScript));

  for (const [name, sep] of [["U+2028", "\u2028"], ["VT", "\x0b"], ["RS", "\x1e"], ["NEL", "\u0085"]] as const) {
    it(`an id holding ${name} around a whole event: the client never reads the key, and gets the error for its id`, async () => {
      const id = nextId++;
      mcp.setScript((m) => {
        const clean = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "fine" }] } });
        return { kind: "raw", body: Buffer.from(`id: 7${sep}data: ${leak(m.id)}${sep}${sep}\ndata: ${clean}\n\n`), headers: { "content-type": "text/event-stream" } };
      });
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      const events = pythonEvents(res.text);
      expect(events.join("\n")).not.toContain(AWS_KEY_ID.slice(8));
      expect(events.map((e) => JSON.parse(e) as unknown)).toEqual([expect.objectContaining({ id, error: expect.objectContaining({ code: expect.any(Number) }) })]);
    });
  }

  it("an ordinary id of a replaced answer is kept", async () => {
    const id = nextId++;
    mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(`id: ev-42\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [] } })}\n\n`), headers: { "content-type": "text/event-stream" } }));
    const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
    expect(res.text).toContain("id: ev-42\n");
    expect(res.text).toContain("-32051");
  });
});
