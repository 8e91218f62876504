import v8 from "node:v8";
import vm from "node:vm";
import { observeForwardedBytes } from "./body-taps.js";

/**
 * Frees forwarded body chunks early (docs/performance.md, "A 100 MiB response"). Every chunk read from a
 * socket is a Buffer whose bytes live outside the JS heap, garbage as soon as it is written on. V8 collects
 * such Buffers when its young generation fills, which their small JS objects hardly do: left alone, tens of
 * MiB of dead chunks pile up while a large body streams through, until V8's external-memory limit forces a
 * full collection. A minor collection every few MiB forwarded frees them at once (well under a millisecond).
 *
 * Chosen once, at process start-up (`cli/main.ts`), before any traffic: the collector is V8's `gc`, exposed by
 * `node --expose-gc`, or else exposed here through V8's flag (the Docker image and `npm start` pin their node
 * command line, and a NODE_OPTIONS flag would reach every Node program `run` starts).
 */
const RECLAIM_EVERY_BYTES = 4 * 1024 * 1024;

type MinorGc = () => void;

export function reclaimForwardedBuffers(): boolean {
  const gc = loadMinorGc();
  if (!gc) return false;
  let sinceLast = 0;
  observeForwardedBytes((bytes) => {
    sinceLast += bytes;
    if (sinceLast < RECLAIM_EVERY_BYTES) return;
    sinceLast = 0;
    gc();
  });
  return true;
}

type GcFunction = (options: { type: "minor"; execution: "sync" }) => void;

function loadMinorGc(): MinorGc | null {
  try {
    let gc = (globalThis as { gc?: GcFunction }).gc;
    if (typeof gc !== "function") {
      v8.setFlagsFromString("--expose-gc");
      gc = vm.runInNewContext("gc") as GcFunction | undefined;
    }
    return typeof gc === "function" ? () => gc({ type: "minor", execution: "sync" }) : null;
  } catch {
    return null;
  }
}
