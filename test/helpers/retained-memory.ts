/**
 * Heap a piece of work leaves behind, measured after full collections (the garbage it made is not counted,
 * only what something still holds). Not a test file.
 */
import v8 from "node:v8";
import vm from "node:vm";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** The JS heap and what lives outside it (Buffers: what a socket has yet to send). */
function settledHeap(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Bytes of heap still held after `work` (a promise is awaited). */
export async function retainedBy(work: () => unknown): Promise<number> {
  const before = settledHeap();
  await work();
  const retained = settledHeap() - before;
  if (process.env.RETAINED_LOG) console.log(`retained ${(retained / MiB).toFixed(1)} MiB`);
  return retained;
}

export const MiB = 1024 * 1024;
