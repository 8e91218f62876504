/**
 * The hostile peer of measure 8 in a process of its own: the hostile upstream and each attack's client side.
 * Building a 6 MB wire of 1-byte chunks or an 8 MB `tools/list` answer takes its own CPU; in the measuring
 * process it would delay the `/healthz` probe and the other client, and the proxy would be charged for it.
 *
 * Protocol (IPC, `fork`): the child sends `{ port }` once its upstream listens; the parent sends
 * `{ row, proxyPort, uiFeed?, msLeft, scale }`, the child answers `{ done }` when the attack ends.
 */
import { ATTACKS, startHostileUpstream } from "./hostile-attacks.ts";
import { nowMs } from "./time.ts";

export interface AttackOrder {
  row: number;
  proxyPort: number;
  uiFeed?: string;
  msLeft: number;
  scale: number;
}

const upstream = await startHostileUpstream();
process.send?.({ port: upstream.port });
process.on("message", (order: AttackOrder) => {
  const attack = ATTACKS.find((a) => a.row === order.row);
  if (!attack) return void process.send?.({ done: `failed: no attack ${order.row}` });
  attack
    .run({ proxyPort: order.proxyPort, upstream: `127.0.0.1:${upstream.port}`, ...(order.uiFeed ? { uiFeed: order.uiFeed } : {}), deadline: nowMs() + order.msLeft, scale: order.scale })
    .then(
      (done) => process.send?.({ done }),
      (err: unknown) => process.send?.({ done: `failed: ${err instanceof Error ? err.message : String(err)}` }),
    );
});
process.on("disconnect", () => {
  upstream.close();
  process.exit(0);
});
