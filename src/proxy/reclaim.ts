import v8 from "node:v8";
import vm from "node:vm";

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

/** Counts bytes that went through the proxy (and so became garbage). */
export function forwarded(bytes: number): void {
  sinceLast += bytes;
  if (sinceLast < RECLAIM_EVERY_BYTES) return;
  sinceLast = 0;
  if (minorGc === undefined) minorGc = loadMinorGc();
  minorGc?.();
}
