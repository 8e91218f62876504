import { createHash } from "node:crypto";
import tls from "node:tls";

/** Root lists whose context is kept: a process runs one proxy, or a few (a UI's replays, tests). */
const MAX_KEPT = 4;
const kept = new Map<string, tls.SecureContext>();

/**
 * The secure context of the proxy→server leg for a list of trusted roots, made once per list in a process:
 * parsing the ~270 roots of Node and the system takes ~80 ms of CPU, which every proxy a replay starts
 * (src/replay/http-replay.ts, one per replay from the web UI) would pay again for the same list.
 */
export function upstreamContext(roots: readonly string[]): tls.SecureContext {
  const key = createHash("sha256").update(roots.join("\n")).digest("hex");
  const hit = kept.get(key);
  if (hit) return hit;
  const context = tls.createSecureContext({ ca: [...roots] });
  kept.set(key, context);
  if (kept.size > MAX_KEPT) kept.delete(kept.keys().next().value as string);
  return context;
}
