/**
 * The Redis connection of the shared state, on a thread of its own (see sync-redis.ts for why). Kept free
 * of project imports and of TypeScript-only syntax so that it also runs from source (type stripping).
 */
import { workerData, type MessagePort } from "node:worker_threads";
import { Redis } from "ioredis";

interface Job {
  seq: number;
  /** Commands run in one MULTI (one command: run alone). */
  commands: (string | number)[][];
}

const { url, port, signal } = workerData as { url: string; port: MessagePort; signal: SharedArrayBuffer };
const flag = new Int32Array(signal);
const redis = new Redis(url, {
  // Fail at once while disconnected rather than queue: the caller is waiting with a deadline.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  connectTimeout: 1_000,
  retryStrategy: () => 500,
  lazyConnect: false,
});
let lastError = "not connected yet";
redis.on("error", (err: Error) => {
  lastError = err.message;
});
redis.on("ready", () => {
  lastError = "";
});

function reply(seq: number, body: { ok: true; value: unknown } | { ok: false; error: string }): void {
  port.postMessage({ seq, ...body });
  Atomics.store(flag, 0, seq);
  Atomics.notify(flag, 0);
}

port.on("message", (job: Job | "close") => {
  if (job === "close") {
    redis.disconnect();
    port.close();
    return;
  }
  if (redis.status !== "ready") {
    reply(job.seq, { ok: false, error: lastError || redis.status });
    return;
  }
  const run =
    job.commands.length === 1
      ? redis.call(String(job.commands[0]![0]), ...job.commands[0]!.slice(1))
      : redis
          .multi(job.commands.map(([name, ...args]) => [String(name).toLowerCase(), ...args.map(String)]))
          .exec()
          .then((results) => {
            if (!results) throw new Error("transaction aborted");
            return results.map(([err, value]) => {
              if (err) throw err;
              return value;
            });
          });
  run.then(
    (value: unknown) => reply(job.seq, { ok: true, value }),
    (err: Error) => reply(job.seq, { ok: false, error: err.message }),
  );
});
