/**
 * Line breaks an SSE reader may see that the proxy does not. httpx splits a response into lines as
 * str.splitlines() does (also at VT, FF, FS, GS, RS, NEL, U+2028, U+2029), and httpx-sse 0.4.0 reads
 * events from those lines (the MCP Python SDK allows it). A comment or an `event:` line with one of them
 * hides a `data:` line from the proxy: nothing was judged, and the answer with the key in it reached the
 * client as received.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LogRecord, TestProxy } from "../../helpers/proxy-harness.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";
import { leak, pythonEvents } from "./python-sse-reader.js";

describe("an event stream with line breaks only httpx sees (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let nextId = 1300;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
  beforeAll(() => void ({ mcp, proxy, client, url } = scenario));
  const record = (id: number): Promise<LogRecord> =>
    proxy.waitForRecord((r) => r.event === "rpc" && r.id === id && r.direction === "server_to_client", { what: `the response record for id ${id}` });
  type Decision = { action: string; enforced: boolean; rules: { name: string; action: string; reason?: string }[] };
  beforeEach(() => mcp.setScript(defaultScript));

  for (const [name, sep] of [["U+2028", "\u2028"], ["NEL", "\u0085"], ["VT", "\x0b"], ["FF", "\x0c"], ["RS", "\x1e"]] as const) {
    for (const [where, stream] of [
      ["a comment", (id: unknown) => `: ping${sep}data: ${leak(id)}\n\n`],
      ["an event name", (id: unknown) => `event: message${sep}data: ${leak(id)}\n\n`],
    ] as const) {
      it(`${name} in ${where}: the client never reads the key`, async () => {
        const id = nextId++;
        mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(stream(m.id)), headers: { "content-type": "text/event-stream" } }));
        const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
        expect(pythonEvents(res.text).join("\n")).not.toContain(AWS_KEY_ID.slice(8));
      });
    }
  }

  // An ordinary result whose text holds the character inside a JSON string: escaped, it is the same JSON to
  // every reader. It used to be recorded as allowed and then dropped: the client waited for an answer forever.
  for (const [name, sep] of [["U+2028", "\u2028"], ["U+2029", "\u2029"], ["NEL", "\u0085"]] as const) {
    it(`${name} inside a JSON string of a tool result: the client gets the result or -32052 for its id, as recorded`, async () => {
      const id = nextId++;
      const result = { content: [{ type: "text", text: `line one${sep}line two` }] };
      mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: m.id, result })}\n\n`), headers: { "content-type": "text/event-stream" } }));
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      const events = pythonEvents(res.text);
      expect(events).toHaveLength(1);
      const answer = JSON.parse(events[0]!) as Record<string, unknown>;
      const decision = (await record(id)).decision as Decision;
      if ("result" in answer) {
        expect(answer).toEqual({ jsonrpc: "2.0", id, result });
        // Passed on: allowed (or only flagged: a detector may flag NEL, a C1 control), never a denial.
        expect(decision).toMatchObject({ action: expect.stringMatching(/^(allow|flag)$/), enforced: false });
      } else {
        expect(answer).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32052 } });
        expect(decision).toMatchObject({ action: "deny", enforced: true });
        expect(decision.rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "deny" }));
      }
    });
  }

  // Beside a line that is not `data:`, the character changes the event for httpx: never passed on, and the
  // request it answers gets -32052 (the record says so), not silence.
  for (const [name, sep] of [["U+2028", "\u2028"], ["NEL", "\u0085"], ["FF", "\x0c"]] as const) {
    it(`${name} in the event name of an ordinary result: the client gets -32052 for its id, recorded as denied`, async () => {
      const id = nextId++;
      const clean = (i: unknown): string => JSON.stringify({ jsonrpc: "2.0", id: i, result: { content: [{ type: "text", text: "fine" }] } });
      mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(`event: message${sep}x\ndata: ${clean(m.id)}\n\n`), headers: { "content-type": "text/event-stream" } }));
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      const events = pythonEvents(res.text).map((e) => JSON.parse(e) as unknown);
      expect(events).toEqual([{ jsonrpc: "2.0", id, error: expect.objectContaining({ code: -32052, message: expect.stringContaining("line break") }) }]);
      const rec = await record(id);
      expect(rec.decision).toMatchObject({ action: "deny", enforced: true });
      expect((rec.decision as Decision).rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "deny", reason: expect.stringContaining("str.splitlines()") }));
    });
  }
});
