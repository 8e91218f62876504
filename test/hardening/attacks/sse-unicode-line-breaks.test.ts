/**
 * Line breaks an SSE reader may see that the proxy does not. httpx splits a response into lines as
 * str.splitlines() does (also at VT, FF, FS, GS, RS, NEL, U+2028, U+2029), and httpx-sse 0.4.0 reads
 * events from those lines (the MCP Python SDK allows it). A comment or an `event:` line with one of them
 * hides a `data:` line from the proxy: nothing was judged, and the answer with the key in it reached the
 * client as received.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });

/** The lines httpx reads from a text (str.splitlines). */
const PY_LINE_BREAKS = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** What httpx-sse 0.4.0 dispatches: the data of each event, from lines split as httpx splits them. */
function pythonEvents(text: string): string[] {
  const out: string[] = [];
  let data: string[] = [];
  for (const line of text.split(PY_LINE_BREAKS)) {
    if (line === "") {
      if (data.length > 0) out.push(data.join("\n"));
      data = [];
    } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  return out;
}

describe("an event stream with line breaks only httpx sees (enforce mode)", () => {
  let mcp: ScriptedMcp;
  let client: WireClient;
  let url: string;
  let nextId = 1300;
  const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
  beforeAll(() => void ({ mcp, client, url } = scenario));
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
});
