import type { Readable } from "node:stream";
import type { BodyTap } from "./exchange.js";

/** Told the size of every chunk forwarded on any leg; set once at start-up (`reclaim-buffers.ts`), or none. */
let forwardedBytes: ((bytes: number) => void) | null = null;

export function observeForwardedBytes(observer: ((bytes: number) => void) | null): void {
  forwardedBytes = observer;
}

/**
 * Counts every chunk `source` delivers as forwarded (`count` gets its size), then hands it to `then`. Attach
 * after the source is piped on: the chunk is then on its way before `then` looks at it.
 */
export function countForwarded(source: Readable, count: (bytes: number) => void, then?: (chunk: Buffer) => void): void {
  source.on("data", (chunk: Buffer) => {
    count(chunk.length);
    forwardedBytes?.(chunk.length);
    then?.(chunk);
  });
}

/** Body taps: each chunk counted as forwarded, then (after `sent` has flushed what was piped) handed to `taps`. */
export function tapForwarded(source: Readable, taps: BodyTap, count: (bytes: number) => void, sent?: () => void): void {
  countForwarded(source, count, (chunk) => {
    sent?.();
    taps.data(chunk);
  });
}
