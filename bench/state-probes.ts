/**
 * The state section's helpers, each in a process of its own so that the bench's busy client cannot delay
 * them: `hop PORT DELAY_MS` runs the delaying TCP hop in front of Redis and prints `HOP_PORT n`; `healthz
 * URL MS` asks URL every 10 ms for MS and prints each answer's time (ms) as JSON.
 */
import { request } from "undici";
import { startDelayingHop } from "../test/helpers/delaying-hop.ts";

const [mode, a, b] = process.argv.slice(2);
if (mode === "hop") {
  const hop = await startDelayingHop({ host: "127.0.0.1", port: Number(a) }, Number(b));
  process.stdout.write(`HOP_PORT ${hop.port}\n`);
  process.once("SIGTERM", () => void hop.close().then(() => process.exit(0)));
} else if (mode === "healthz") {
  const until = performance.now() + Number(b);
  const samples: number[] = [];
  while (performance.now() < until) {
    const t0 = performance.now();
    try {
      await (await request(a!, { headersTimeout: 5_000, bodyTimeout: 5_000 })).body.text();
      samples.push(performance.now() - t0);
    } catch {
      samples.push(5_000);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  process.stdout.write(`${JSON.stringify(samples)}\n`);
} else {
  process.stderr.write("usage: state-probes.ts hop REDIS_PORT DELAY_MS | healthz URL MS\n");
  process.exit(2);
}
