import { Readable } from "node:stream";

/** A chunk this large passes on at once; smaller ones are joined up to this size. */
const JOINED_BYTES = 16 * 1024;

/**
 * `source`'s bytes, unchanged, with the small chunks that one read of its socket yields joined into one (up to
 * 16 KiB): a peer that sends its body in 1-byte chunks (a chunked body parses into one `data` event per chunk)
 * then costs one write onwards and one tap call per read, not a million of each. Joined chunks go on at the end
 * of the tick they arrived in: nothing is held back waiting for more. A lone chunk (the usual case) goes on as
 * it is, uncopied; several are copied once, when joined. A plain Readable fed from `data` events (not a
 * Transform): per chunk, only a push onto the tick's list; back-pressure pauses the source.
 */
export function coalesced(source: Readable): Readable {
  const out = new Readable({ read: () => void source.resume() });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let scheduled = false;
  const pass = (chunk: Buffer): void => {
    if (!out.push(chunk)) source.pause();
  };
  const release = (): void => {
    scheduled = false;
    if (pendingBytes === 0 || out.destroyed) return;
    const joined = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    pending = [];
    pendingBytes = 0;
    pass(joined);
  };
  source.on("data", (chunk: Buffer) => {
    if (chunk.length === 0) return;
    if (pendingBytes === 0 && chunk.length >= JOINED_BYTES) return pass(chunk);
    pending.push(chunk);
    pendingBytes += chunk.length;
    if (pendingBytes >= JOINED_BYTES) release();
    else if (!scheduled) {
      scheduled = true;
      process.nextTick(release);
    }
  });
  source.on("end", () => {
    release();
    out.push(null);
  });
  return out;
}
