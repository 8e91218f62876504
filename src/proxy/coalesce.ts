import { Transform, type Readable, type TransformCallback } from "node:stream";
import { GrowingBuffer } from "../budget/growing-buffer.js";

/** A chunk this large passes on at once; smaller ones are joined up to this size. */
const JOINED_BYTES = 16 * 1024;

/**
 * `source`'s bytes, unchanged, with the small chunks that one read of its socket yields joined into one (up to
 * 16 KiB): a peer that sends its body in 1-byte chunks (a chunked body parses into one `data` event per chunk)
 * then costs one write onwards and one tap call per read, not a million of each. Joined chunks go on at the end
 * of the tick they arrived in: nothing is held back waiting for more.
 */
export function coalesced(source: Readable): Readable {
  const out = new ChunkJoiner();
  source.pipe(out);
  return out;
}

class ChunkJoiner extends Transform {
  private pending = new GrowingBuffer();
  private scheduled = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.pending.length === 0 && chunk.length >= JOINED_BYTES) {
      this.push(chunk);
      return done();
    }
    this.pending.append(chunk);
    if (this.pending.length >= JOINED_BYTES) this.release();
    else if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(() => this.release());
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    this.release();
    done();
  }

  private release(): void {
    this.scheduled = false;
    if (this.pending.length === 0 || this.destroyed) return;
    const joined = this.pending.view();
    this.pending.clear();
    this.push(joined);
  }
}
