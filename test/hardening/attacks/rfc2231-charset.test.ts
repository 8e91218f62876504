/**
 * A charset named the RFC 2231 way (`charset*=''utf-16le`, `charset*0=utf-;charset*1=16le`): httpx reads a
 * body's charset with Python's email.message, which decodes those forms; the proxy's reading of the label
 * knew only `charset=`. So an event stream labelled `text/event-stream; charset*=''utf-16le` was UTF-8 to the
 * proxy (no event, nothing judged) and UTF-16LE to the Python SDK's client, which read a key from it.
 */
import { describe, expect, it, beforeAll, beforeEach } from "vitest";
import { charsetsOf } from "../../../src/body/index.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });

describe("RFC 2231 charset parameters", () => {
  // What Python's email.message.Message().get_content_charset() returns for each (checked with CPython 3.12).
  it.each([
    ["text/event-stream; charset*=''utf-16le", "utf-16le"],
    ["text/event-stream; charset*=utf-8''utf-16le", "utf-16le"],
    ["text/event-stream; CHARSET*0=utf-16le", "utf-16le"],
    ["text/event-stream; charset*0=utf-;charset*1=16le", "utf-16le"],
    ["text/event-stream; charset*=''utf%2D16le", "utf-16le"],
  ])("%s names %s", (type, charset) => {
    expect(charsetsOf(type)).toContain(charset);
  });

  describe("on the wire (enforce mode)", () => {
    let mcp: ScriptedMcp;
    let client: WireClient;
    let url: string;
    let nextId = 2500;
    const scenario = wireScenario(`mode: enforce\ndetectors: { secrets: deny }\n`);
    beforeAll(() => void ({ mcp, client, url } = scenario));
    beforeEach(() => mcp.setScript(defaultScript));

    for (const label of ["charset*=''utf-16le", "charset*0=utf-;charset*1=16le"]) {
      it(`text/event-stream; ${label}: the client never reads the key`, async () => {
        const id = nextId++;
        const junk = Buffer.from("x\n\n".repeat(3));
        mcp.setScript((m) => ({ kind: "raw", body: Buffer.concat([junk, Buffer.from(`\n\nevent: message\ndata: ${leak(m.id)}\n\n`, "utf16le")]), headers: { "content-type": `text/event-stream; ${label}` } }));
        const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
        expect(new TextDecoder("utf-16le").decode(res.body)).not.toContain(AWS_KEY_ID.slice(8));
      });
    }
  });
});
