/**
 * readLine against an independent reading: lines built from messages joined by characters some reader ends
 * a line at, each line split here as the Python SDK / readLine (CR) and str.splitlines() split it and parsed
 * with JSON.parse. Every message such a reader reads must be among what readLine hands on (its values, hidden
 * messages or alternate readings), and a line read otherwise by any reader must carry a doubt.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readLine } from "../../src/stdio/read-line.js";
import { splitBatch } from "../../src/mcp/jsonrpc.js";

const BREAKS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", " ", "\t"];
const message = fc.record({ id: fc.integer({ min: 1, max: 50 }), tool: fc.constantFrom("echo", "delete_everything") }).map(({ id, tool }) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: {} } }));
/** A line: messages and separators, a message maybe wrapped as an argument of another (`"x":SEP{…}SEP`). */
const line = fc.array(fc.tuple(message, fc.constantFrom(...BREAKS), fc.boolean()), { minLength: 1, maxLength: 4 }).map((parts) =>
  parts.reduce((acc, [m, sep, wrap]) => (acc === "" ? m : wrap ? `${m.slice(0, -3)}"x":${sep}${acc}${sep}}}}` : `${acc}${sep}${m}`), ""),
);

const independent = (text: string): string[] => {
  const out: string[] = [];
  for (const pieces of [text.split("\r"), text.split(/[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/), [text]]) {
    for (const p of pieces) {
      try {
        out.push(...splitBatch(JSON.parse(p)).messages.map((m) => JSON.stringify(m)));
      } catch {
        // not JSON to this reader
      }
    }
  }
  return out;
};

describe("readLine: every message a line-splitting reader reads is handed on", () => {
  it("holds for generated lines", () => {
    fc.assert(
      fc.property(line, (text) => {
        const r = readLine(Buffer.from(text));
        const handed = new Set([
          ...r.values.flatMap((v) => splitBatch(v).messages),
          ...r.hidden.map((h) => h.message),
          ...[...r.alternates.values()].flat(),
        ].map((m) => JSON.stringify(m)));
        const read = independent(text);
        for (const m of read) expect(handed.has(m), `${JSON.stringify(text)}: ${m}`).toBe(true);
        // A reader that reads other messages than the proxy's own reading: the line is in doubt.
        const own = r.values.flatMap((v) => splitBatch(v).messages).map((m) => JSON.stringify(m));
        if (read.some((m) => !own.includes(m))) expect(r.doubt).toBeDefined();
      }),
      { numRuns: 300 },
    );
  });
});
