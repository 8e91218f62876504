import type { OutgoingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { declaredLength, endWithLastChunk } from "../../src/proxy/end-with-last-chunk.js";

function dest(state: { writableEnded?: boolean; writableNeedDrain?: boolean } = {}) {
  let ends = 0;
  const msg = { writableEnded: false, writableNeedDrain: false, ...state, end: () => void ends++ };
  return { msg: msg as unknown as OutgoingMessage, ends: () => ends };
}

describe("declaredLength", () => {
  it("reads a Content-Length, and nothing else", () => {
    expect(declaredLength("0")).toBe(0);
    expect(declaredLength("1234")).toBe(1234);
    expect(declaredLength(undefined)).toBeNull();
    expect(declaredLength("")).toBeNull();
    expect(declaredLength("12, 12")).toBeNull();
    expect(declaredLength("1e3")).toBeNull();
    expect(declaredLength("99999999999999999999")).toBeNull();
  });
});

describe("endWithLastChunk", () => {
  it("ends the message once the declared body is all forwarded", () => {
    const d = dest();
    expect(endWithLastChunk(d.msg, 10, 4)).toBe(false);
    expect(endWithLastChunk(d.msg, 10, 10)).toBe(true);
    expect(d.ends()).toBe(1);
  });

  it("leaves the end to the pipe without a declared length, under backpressure, or when already ended", () => {
    for (const [d, declared] of [
      [dest(), null],
      [dest({ writableNeedDrain: true }), 10],
      [dest({ writableEnded: true }), 10],
    ] as const) {
      expect(endWithLastChunk(d.msg, declared, 10)).toBe(false);
      expect(d.ends()).toBe(0);
    }
  });
});
