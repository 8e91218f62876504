/**
 * A JSON-RPC call in UTF-16 or UTF-32 without a byte order mark or a charset, under a non-JSON content type
 * and without MCP headers. JSON text in those encodings is told by where its zero bytes are (RFC 4627 §3);
 * Python's json.loads(bytes) reads it so. The proxy read only UTF-8 (not JSON: NUL bytes), took the body
 * for a text upload and forwarded the denied call with no record of it.
 */
import { describe, expect, it } from "vitest";
import { deniedCall, deniedRecorded, denyDeleteScenario, postNotForwarded } from "./denied-call-scenario.js";

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
  const s = denyDeleteScenario();

  let id = 1;
  for (const [name, encode] of ENCODINGS) {
    it(`${name}: judged and refused, never forwarded`, async () => {
      const n = id++;
      await postNotForwarded(s, encode(deniedCall(n)), { "content-type": "text/plain" });
      expect(await deniedRecorded(s, n)).toBe(true);
    });
  }
});
