import type { OutgoingMessage } from "node:http";

/** A Content-Length as node's parser passed it (one decimal number), or null when there is none. */
export function declaredLength(value: string | undefined): number | null {
  if (value === undefined || !/^\d+$/.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * Called right after a chunk of a body of `declared` length was written (piped) to `dest`, with the body bytes
 * forwarded so far: when that chunk completed the body, `dest` is ended now, inside the cork node holds its
 * socket in for the rest of the tick, so head, last chunk and end leave in one TLS record and one system call.
 * Ended a tick later instead (on the source's `end`, after node's own uncork), a message whose TLS write is
 * still in flight ends with a write of its own: OutgoingMessage.end sends an empty chunk so that its 'finish'
 * follows the data, and over TLS an empty write is still a write.
 *
 * False, and nothing done, when the body is not complete, has no declared length, or `dest` asked the pipe to
 * wait (backpressure): the caller flushes as before, and the pipe ends `dest` on the source's `end` (a second
 * `end()` after this one is a no-op).
 */
export function endWithLastChunk(dest: OutgoingMessage, declared: number | null, forwarded: number): boolean {
  if (declared === null || forwarded !== declared || dest.writableEnded || dest.writableNeedDrain) return false;
  dest.end();
  return true;
}
