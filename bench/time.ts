/** Clocks and bounded waiting. Every wait in the bench goes through here, so none can hang. */
import { setTimeout as sleep } from "node:timers/promises";

export { sleep };

/** Milliseconds on the monotonic clock shared by the bench's client and upstream (same process). */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export class TimeoutError extends Error {}

/** Resolves with `promise`, or rejects after `ms` with a message naming `what`. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every `everyMs` until it is true or `ms` have passed; returns whether it became true. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms: number, everyMs = 25): Promise<boolean> {
  const end = nowMs() + ms;
  while (nowMs() < end) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return check();
}
