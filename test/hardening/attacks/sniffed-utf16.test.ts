/**
 * A JSON-RPC call in UTF-16 or UTF-32 without a byte order mark or a charset, under a non-JSON content type
 * and without MCP headers. JSON text in those encodings is told by where its zero bytes are (RFC 4627 §3);
 * Python's json.loads(bytes) reads it so. The proxy read only UTF-8 (not JSON: NUL bytes), took the body
 * for a text upload and forwarded the denied call with no record of it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const denied = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;

function utf32(text: string, be: boolean): Buffer {
  const out = Buffer.alloc(text.length * 4);
  for (let i = 0; i < text.length; i++) (be ? out.writeUInt32BE.bind(out) : out.writeUInt32LE.bind(out))(text.charCodeAt(i), i * 4);
  return out;
}

const ENCODINGS: [string, (s: string) => Buffer][] = [
  ["UTF-16LE", (s) => Buffer.from(s, "utf16le")],
  ["UTF-16BE", (s) => Buffer.from(s, "utf16le").swap16()],
  ["UTF-32LE", (s) => utf32(s, false)],
  ["UTF-32BE", (s) => utf32(s, true)],
];

describe("a JSON-RPC call in UTF-16/32 without BOM or charset, under text/plain (enforce mode)", () => {
  let up: ScriptedUpstream;
  let client: WireClient;
  let proxy: TestProxy;
  let url: string;
  const scenario = wireScenario(`mode: enforce\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n`);
  beforeAll(() => void ({ up, client, url, proxy } = scenario));

  let id = 1;
  for (const [name, encode] of ENCODINGS) {
    it(`${name}: judged and refused, never forwarded`, async () => {
      const n = id++;
      const before = up.requests.length;
      const res = await client.post(url, encode(denied(n)), { "content-type": "text/plain" });
      expect(up.requests.length, `forwarded (status ${res.status}: ${res.text})`).toBe(before);
      const records = await proxy.records();
      expect(records.some((r) => r.direction === "client_to_server" && (r.decision as { action?: string } | undefined)?.action === "deny" && r.id === n)).toBe(true);
    });
  }
});
