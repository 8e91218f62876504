import { Readable } from "node:stream";
import type { ReadGate } from "./read-gate.js";

/** A chunk this large passes on at once; smaller ones are joined up to this size. */
const JOINED_BYTES = 16 * 1024;

/**
 * `source`'s bytes, unchanged, with the small chunks that one read of its socket yields joined into one (up to
 * 16 KiB): a peer that sends its body in 1-byte chunks (a chunked body parses into one `data` event per chunk)
 * then costs one write onwards and one tap call per read, not a million of each. Joined chunks go on at the end
 * of the tick they arrived in: nothing is held back waiting for more. A lone chunk (the usual case) goes on as
 * it is, uncopied; several are copied once, when joined. A plain Readable fed from `data` events (not a
 * Transform): per chunk, only a push onto the tick's list; back-pressure pauses the source.
 *
 * `gate` closed: the source is paused too, whatever the reader downstream wants, and read on once it opens.
 * Paused is the source itself (an IncomingMessage: its socket is read no more once its own small buffer is
 * full), and only this stream resumes it: pausing the socket under it would not hold, as the message's
 * reads start it again.
 */
export function coalesced(source: Readable, gate?: ReadGate): Readable {
  const out = new Readable({ read: () => void (gate?.open !== false && source.resume()) });
  if (gate) {
    const unwatch = gate.watch((open) => void (open ? !out.destroyed && source.resume() : source.pause()));
    out.once("close", unwatch);
    source.once("close", unwatch);
  }
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
  // A `data` listener starts the source flowing: a gate closed already (the exchange was paused from its
  // start) must hold it too, not only a gate that closes later.
  if (gate && !gate.open) source.pause();
  return out;
}
