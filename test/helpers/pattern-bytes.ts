/**
 * Deterministic pseudo-random bytes (xorshift32), so a test can check a large
 * body byte-for-byte without keeping a copy of what the upstream sent.
 */

/** Produces the byte sequence for `seed` piece by piece; pieces concatenate seamlessly. */
export class PatternByteStream {
  private state: number;
  private spare: number[] = [];

  constructor(seed = 1) {
    // xorshift32 must never have an all-zero state.
    this.state = (seed ^ 0x9e3779b9) >>> 0 || 0x9e3779b9;
  }

  private nextWord(): number {
    let x = this.state;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    this.state = x;
    return x;
  }

  /** The next `n` bytes of the sequence. */
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let offset = 0;
    while (offset < n && this.spare.length > 0) out[offset++] = this.spare.shift() ?? 0;
    while (n - offset >= 4) {
      out.writeUInt32LE(this.nextWord(), offset);
      offset += 4;
    }
    if (offset < n) {
      const word = this.nextWord();
      const bytes = [word & 0xff, (word >>> 8) & 0xff, (word >>> 16) & 0xff, word >>> 24];
      while (offset < n) out[offset++] = bytes.shift() ?? 0;
      this.spare = bytes;
    }
    return out;
  }
}

/** The first `n` bytes of the pattern for `seed` (what `/bytes?n=N&seed=S` serves). */
export function patternBytes(n: number, seed = 1): Buffer {
  return new PatternByteStream(seed).take(n);
}
