import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CanonicalJsonError,
  MAX_CANONICAL_DEPTH,
  argsHash,
  canonicalJson,
  computeArgsHash,
  sha256Of,
} from "../../src/util/canonical-json.js";

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { a: value };
  return value;
}

/** Same members, inserted in reverse order at every level. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value !== "object" || value === null) return value;
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) {
    Object.defineProperty(result, key, {
      value: reverseKeys((value as Record<string, unknown>)[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

describe("canonicalJson", () => {
  it("sorts members, drops whitespace and undefined members", () => {
    expect(canonicalJson({ b: 1, a: [true, null, "x"], c: undefined, d: { z: 0, y: -1.5 } })).toBe(
      '{"a":[true,null,"x"],"b":1,"d":{"y":-1.5,"z":0}}',
    );
    expect(canonicalJson([undefined, () => 1])).toBe("[null,null]");
    expect(canonicalJson("é\u2028")).toBe(JSON.stringify("é\u2028"));
  });

  it("sorts by UTF-16 code units, as RFC 8785 asks", () => {
    // U+1F600 is a surrogate pair (0xD83D...), which sorts before U+FB01 (0xFB01) in UTF-16.
    const value = { "\ufb01": 1, "\u{1f600}": 2, a: 3, B: 4, "": 5 };
    expect(canonicalJson(value)).toBe('{"":5,"B":4,"a":3,"\u{1f600}":2,"\ufb01":1}');
  });

  it("prints numbers as JSON.stringify does", () => {
    expect(canonicalJson([1e21, 1e-7, -0, 0.1, 2 ** 53, Number.NaN])).toBe("[1e+21,1e-7,0,0.1,9007199254740992,null]");
  });

  it("honours toJSON like JSON.stringify", () => {
    expect(canonicalJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
  });

  it("refuses too-deep values without overflowing the stack", () => {
    expect(() => canonicalJson(nested(100_000))).toThrow(CanonicalJsonError);
    expect(canonicalJson(nested(MAX_CANONICAL_DEPTH))).toContain("1");
    try {
      canonicalJson(nested(MAX_CANONICAL_DEPTH + 1));
      expect.unreachable();
    } catch (error) {
      expect((error as CanonicalJsonError).reason).toBe("too_deep");
    }
  });

  it("refuses cycles, bigints and undefined", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(expect.objectContaining({ reason: "cycle" }));
    expect(() => canonicalJson({ n: 1n })).toThrow(expect.objectContaining({ reason: "not_serializable" }));
    expect(() => canonicalJson(undefined)).toThrow(expect.objectContaining({ reason: "not_serializable" }));
  });

  it("accepts shared (non-cyclic) references", () => {
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
  });

  it("is a fixed point through JSON.parse", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it("agrees with JSON.stringify on everything but member order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 300 },
    );
  });
});

describe("hashes", () => {
  it("sha256Of prefixes the hex digest", () => {
    expect(sha256Of("abc")).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Of(Buffer.from("abc"))).toBe(sha256Of("abc"));
    expect(sha256Of("é")).toBe(`sha256:${createHash("sha256").update(Buffer.from([0xc3, 0xa9])).digest("hex")}`);
  });

  it("argsHash is the hash of the canonical text", () => {
    const expected = createHash("sha256").update('{"path":"/tmp/x","recursive":true}', "utf8").digest("hex");
    expect(argsHash({ recursive: true, path: "/tmp/x" })).toBe(`sha256:${expected}`);
    expect(argsHash({ path: "/tmp/x", recursive: true })).toBe(`sha256:${expected}`);
  });

  it("argsHash is stable under member permutation", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(argsHash(reverseKeys(value))).toBe(argsHash(value));
      }),
      { numRuns: 300 },
    );
  });

  it("argsHash is null, with a reason, when there is nothing to hash", () => {
    expect(argsHash(undefined)).toBeNull();
    expect(argsHash(nested(100_000))).toBeNull();
    expect(computeArgsHash(nested(100_000))).toEqual({
      hash: null,
      reason: `nesting deeper than ${MAX_CANONICAL_DEPTH}`,
    });
    const throwing = { toJSON: () => { throw new Error("nope"); } };
    expect(computeArgsHash(throwing)).toEqual({ hash: null, reason: "nope" });
  });
});

describe("sha256Of (one-shot hash)", () => {
  it("equals the streaming digest of the same text or bytes", () => {
    const streaming = (data: string | Buffer) => `sha256:${createHash("sha256").update(data).digest("hex")}`;
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" })), fc.uint8Array({ maxLength: 300 }), (text, bytes) => {
        expect(sha256Of(text)).toBe(streaming(text));
        expect(sha256Of(Buffer.from(bytes))).toBe(streaming(Buffer.from(bytes)));
      }),
      { numRuns: 1000 },
    );
  });
});
