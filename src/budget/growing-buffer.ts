import type { Charge } from "./inspect-budget.js";

const FIRST_SLAB = 256;

/**
 * Bytes that arrive in pieces (down to one byte each), kept in a short list of slabs, each as large as all
 * before it: a body sent in a million 1-byte chunks costs about 2 × log2(n) slabs and one copy per byte,
 * never an object per chunk, and growing leaves no garbage behind (no slab is copied into a larger one until
 * the bytes are read whole, once). The slabs' size is charged to `charge`, when given; an append the charge
 * cannot grow to hold is refused. Hand-written: Node has no growable byte buffer (an ArrayBuffer with
 * maxByteLength reserves its maximum up front).
 */
export class GrowingBuffer {
  private slabs: Buffer[] = [];
  private capacity = 0;
  private size = 0;
  /** The slab being filled, and the bytes in the slabs before it. */
  private current = 0;
  private before = 0;

  /** `maxCapacity`: slabs stop growing there (a body inspected up to a limit never needs more). */
  constructor(
    private readonly charge?: Charge,
    private readonly maxCapacity = Number.MAX_SAFE_INTEGER,
  ) {}

  get length(): number {
    return this.size;
  }

  /** Appends a copy of `chunk`; false, keeping nothing of it, when the charge refuses the room it needs. */
  append(chunk: Uint8Array): boolean {
    if (chunk.length === 0) return true;
    const need = this.size + chunk.length;
    if (need > this.capacity) {
      // A slab as large as all before it (so there are few), or the chunk's overflow when that is more.
      const room = Math.max(need - this.capacity, Math.min(Math.max(this.capacity, FIRST_SLAB), this.maxCapacity - this.capacity));
      if (this.charge && !this.charge.resize(this.capacity + room)) return false;
      this.slabs.push(Buffer.allocUnsafeSlow(room));
      this.capacity += room;
    }
    // Fill the free end of the slabs in order: the current one, then the new one.
    let offset = 0;
    while (offset < chunk.length) {
      const slab = this.slabs[this.current]!;
      const at = this.size - this.before;
      if (at === slab.length) {
        this.before += slab.length;
        this.current++;
        continue;
      }
      const n = Math.min(slab.length - at, chunk.length - offset);
      slab.set(n === chunk.length ? chunk : chunk.subarray(offset, offset + n), at);
      offset += n;
      this.size += n;
    }
    return true;
  }

  /** The bytes kept, in order, as views of the slabs (not joined): valid until the next append or clear. */
  pieces(): Buffer[] {
    const pieces: Buffer[] = [];
    let left = this.size;
    for (const slab of this.slabs) {
      if (left === 0) break;
      pieces.push(slab.subarray(0, Math.min(left, slab.length)));
      left -= pieces.at(-1)!.length;
    }
    return pieces;
  }

  /** The bytes kept, as one buffer (joined once, then kept so): valid until the next append or clear. */
  view(): Buffer {
    if (this.slabs.length === 0) return Buffer.alloc(0);
    if (this.slabs.length > 1) {
      const joined = Buffer.concat(this.slabs, this.size);
      this.slabs = [joined];
      this.capacity = joined.length;
      this.current = 0;
      this.before = 0;
      this.charge?.resize(joined.length);
    }
    return this.slabs[0]!.subarray(0, this.size);
  }

  /** Forgets the bytes and releases the charge. */
  clear(): void {
    this.slabs = [];
    this.capacity = 0;
    this.size = 0;
    this.current = 0;
    this.before = 0;
    this.charge?.release();
  }
}
