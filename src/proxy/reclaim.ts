import v8 from "node:v8";
import type { Readable } from "node:stream";
import vm from "node:vm";
import type { BodyTap } from "./exchange.js";

/**
 * Frees forwarded body chunks early. Every chunk read from a socket is a Buffer whose bytes live outside
 * the JS heap, and it is garbage as soon as it is written on. V8 collects such Buffers when its young
 * generation fills, which their small JS objects hardly do: left alone, ~64 MB of dead chunks pile up
 * while 100 MB stream through (V8's external-memory limit finally forces a full collection). A minor
 * collection every few MiB forwarded frees them at once; it takes well under a millisecond.
 */
const RECLAIM_EVERY_BYTES = 4 * 1024 * 1024;

type MinorGc = () => void;

function loadMinorGc(): MinorGc | null {
  try {
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as ((options: { type: "minor"; execution: "sync" }) => void) | undefined;
    return typeof gc === "function" ? () => gc({ type: "minor", execution: "sync" }) : null;
  } catch {
    return null;
  }
}

let minorGc: MinorGc | null | undefined;
let sinceLast = 0;

/**
 * Counts every chunk `source` delivers as forwarded (`count` gets its size), then hands it to `then`. Attach
 * after the source is piped on: the chunk is then on its way before `then` looks at it.
 */
export function countForwarded(source: Readable, count: (bytes: number) => void, then?: (chunk: Buffer) => void): void {
  source.on("data", (chunk: Buffer) => {
    count(chunk.length);
    forwarded(chunk.length);
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

/** Counts bytes that went through the proxy (and so became garbage). */
function forwarded(bytes: number): void {
  sinceLast += bytes;
  if (sinceLast < RECLAIM_EVERY_BYTES) return;
  sinceLast = 0;
  if (minorGc === undefined) minorGc = loadMinorGc();
  minorGc?.();
}
