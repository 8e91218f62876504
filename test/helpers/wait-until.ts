/** Polls `predicate` every `intervalMs` until it is true; rejects after `timeoutMs`. */
export async function waitUntil(
  predicate: () => boolean,
  { timeoutMs = 5_000, intervalMs = 10, what = "condition" } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
