import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  type TruncatedPayload,
  measurePayload,
  shapePayload,
  utf8Prefix,
} from "../../src/log/payload.js";

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

/** A string payload whose JSON text (with its two quotes) is exactly `bytes` long. */
const stringOfJsonBytes = (bytes: number) => "x".repeat(bytes - 2);

function deeplyNested(depth: number): unknown {
  let value: unknown = 0;
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

describe("shapePayload", () => {
  const big = { content: [{ type: "text", text: "é".repeat(DEFAULT_MAX_PAYLOAD_BYTES) }] };

  it("returns the value itself in full mode and nothing in none mode", () => {
    expect(shapePayload(big, "full")).toBe(big);
    expect(shapePayload(big, "none")).toBeUndefined();
  });

  it("defaults to truncated at 64 KiB", () => {
    expect(DEFAULT_MAX_PAYLOAD_BYTES).toBe(65536);
    const small = { a: 1 };
    expect(shapePayload(small)).toBe(small);
    const shaped = shapePayload(big) as TruncatedPayload;
    const text = JSON.stringify(big);
    expect(shaped).toEqual({
      truncated: true,
      bytes: Buffer.byteLength(text),
      sha256: sha256(text),
      preview: expect.any(String),
    });
    expect(Buffer.byteLength(shaped.preview)).toBeLessThanOrEqual(DEFAULT_MAX_PAYLOAD_BYTES);
    expect(text.startsWith(shaped.preview)).toBe(true);
  });

  it("keeps a payload of exactly maxBytes and truncates one byte more", () => {
    const exact = stringOfJsonBytes(100);
    expect(shapePayload(exact, "truncated", 100)).toBe(exact);
    const over = stringOfJsonBytes(101);
    expect(shapePayload(over, "truncated", 100)).toEqual({
      truncated: true,
      bytes: 101,
      sha256: sha256(JSON.stringify(over)),
      preview: JSON.stringify(over).slice(0, 100),
    });
  });

  it("counts UTF-8 bytes, not characters", () => {
    const value = "é".repeat(50); // 102 bytes of JSON, 52 characters
    expect(shapePayload(value, "truncated", 101)).toMatchObject({ truncated: true, bytes: 102 });
    expect(shapePayload(value, "truncated", 102)).toBe(value);
  });

  it("cuts the preview on a character boundary", () => {
    const value = "a😀é€";
    // JSON text: '"' (1) 'a' (1) 😀 (4) é (2) € (3) '"' (1) = 12 bytes
    const previewAt = (maxBytes: number) => (shapePayload(value, "truncated", maxBytes) as TruncatedPayload).preview;
    expect(previewAt(2)).toBe('"a');
    expect(previewAt(5)).toBe('"a');
    expect(previewAt(6)).toBe('"a😀');
    expect(previewAt(7)).toBe('"a😀');
    expect(previewAt(8)).toBe('"a😀é');
    expect(previewAt(10)).toBe('"a😀é');
    expect(previewAt(11)).toBe('"a😀é€');
    expect(previewAt(0)).toBe("");
  });

  it("marks values JSON.stringify cannot handle instead of throwing", () => {
    expect(shapePayload(deeplyNested(100_000))).toEqual({ unserializable: true, reason: expect.any(String) });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(shapePayload(cyclic)).toMatchObject({ unserializable: true });
    expect(shapePayload({ n: 1n })).toMatchObject({ unserializable: true });
  });

  it("passes undefined through and rejects a bad limit", () => {
    expect(shapePayload(undefined)).toBeUndefined();
    expect(() => shapePayload({}, "truncated", -1)).toThrow(RangeError);
  });
});

describe("utf8Prefix", () => {
  it("is the longest well-formed prefix that fits", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.nat(120), (text, maxBytes) => {
        const prefix = utf8Prefix(text, maxBytes);
        const bytes = Buffer.byteLength(prefix);
        expect(text.startsWith(prefix)).toBe(true);
        expect(bytes).toBeLessThanOrEqual(maxBytes);
        if (prefix.length < text.length) {
          const nextCodePoint = String.fromCodePoint(text.codePointAt(prefix.length) as number);
          expect(bytes + Buffer.byteLength(nextCodePoint)).toBeGreaterThan(maxBytes);
        }
      }),
    );
  });
});

describe("measurePayload", () => {
  it("gives size and hash of the JSON text", () => {
    const value = { text: "héllo" };
    const text = JSON.stringify(value);
    expect(measurePayload(value)).toEqual({ bytes: Buffer.byteLength(text), sha256: sha256(text) });
    expect(measurePayload(deeplyNested(100_000))).toMatchObject({ unserializable: true });
    expect(measurePayload(undefined)).toBeUndefined();
  });
});
