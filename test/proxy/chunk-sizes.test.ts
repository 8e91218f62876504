/**
 * What decides whether a body read in its sender's turn may be read now (src/proxy/coalesce.ts ChunkSizes,
 * used by the forwarder and both enforce-mode response writers): the exchange's own gate always holds; the
 * sender's turn holds a body, except one sent in tiny chunks, which Node's parser would keep as an object per
 * chunk for as long as the pause lasts.
 */
import { describe, expect, it } from "vitest";
import { ChunkSizes } from "../../src/proxy/coalesce.js";

const open = { open: true };
const closed = { open: false };

function sent(chunkBytes: number, count: number): ChunkSizes {
  const sizes = new ChunkSizes();
  for (let i = 0; i < count; i++) sizes.add(Buffer.alloc(chunkBytes));
  return sizes;
}

describe("ChunkSizes.readable", () => {
  it("a closed turn holds a body in ordinary chunks, and so does a body too young to tell", () => {
    expect(ChunkSizes.readable(open, closed, sent(16 * 1024, 100))).toBe(false);
    expect(ChunkSizes.readable(open, closed, sent(1, 10))).toBe(false);
    expect(ChunkSizes.readable(open, open, sent(16 * 1024, 100))).toBe(true);
    expect(ChunkSizes.readable(open, undefined, sent(16 * 1024, 100))).toBe(true);
  });

  it("a body in tiny chunks reads on through its sender's closed turn, never through the exchange's own gate", () => {
    const tiny = sent(1, 1000);
    expect(tiny.tiny).toBe(true);
    expect(ChunkSizes.readable(open, closed, tiny)).toBe(true);
    expect(ChunkSizes.readable(closed, open, tiny)).toBe(false);
    expect(ChunkSizes.readable(closed, closed, tiny)).toBe(false);
  });
});
