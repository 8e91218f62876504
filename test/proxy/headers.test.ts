import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { endToEndRawHeaders, HOP_BY_HOP } from "../../src/proxy/headers.js";

/** The definition endToEndRawHeaders computes faster: one set of every name to drop. */
function endToEndRawHeadersBySet(raw: readonly string[], keep: ReadonlySet<string> = new Set(), drop: readonly string[] = []): string[] {
  const dropped = new Set([...HOP_BY_HOP, ...drop]);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === "connection") {
      for (const token of raw[i + 1]!.split(",")) dropped.add(token.trim().toLowerCase());
    }
  }
  for (const name of keep) dropped.delete(name);
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!dropped.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

const names = ["Connection", "connection", "CONNECTION", "Keep-Alive", "Upgrade", "upgrade", "Transfer-Encoding", "TE", "Content-Length", "content-type", "X-Foo", "x-foo", "Expect", "Host", "Mcp-Session-Id"];
const name = fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 }));
const value = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.array(fc.constantFrom(...names.map((n) => n.toLowerCase()), "close", "", " X-Foo "), { maxLength: 4 }).map((t) => t.join(",")),
);
const lower = fc.constantFrom(...names.map((n) => n.toLowerCase()));

describe("endToEndRawHeaders", () => {
  it("keeps exactly the headers of the set-based definition, in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, value), { maxLength: 10 }).map((pairs) => pairs.flat()),
        fc.array(lower, { maxLength: 3 }),
        fc.array(lower, { maxLength: 3 }),
        (raw, keep, drop) => {
          expect(endToEndRawHeaders(raw, new Set(keep), drop)).toEqual(endToEndRawHeadersBySet(raw, new Set(keep), drop));
          expect(endToEndRawHeaders(raw)).toEqual(endToEndRawHeadersBySet(raw));
        },
      ),
      { numRuns: 3000 },
    );
  });
});
