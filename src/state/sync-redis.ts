/**
 * Synchronous Redis commands with a deadline. The policy judges a message synchronously (enforcement
 * acts on the verdict before the next byte moves), so a shared counter must be read within that call: the
 * connection lives on a worker thread and this thread waits for its answer with Atomics.wait, bounded by
 * a deadline. After a failure the store is treated as unreachable for a short while without asking, so a
 * hung server costs one deadline per second at most, not one per message.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from "node:worker_threads";

export class StateUnavailableError extends Error {}

export interface SyncRedisOptions {
  /** How long one call may block the caller (default 250 ms). */
  timeoutMs?: number;
  /** After a failure, calls fail at once for this long (default 1 s). */
  backoffMs?: number;
}

export class SyncRedis {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private seq = 0;
  private downUntil = 0;
  private readonly timeoutMs: number;
  private readonly backoffMs: number;
  lastError = "";

  constructor(
    readonly url: string,
    opts: SyncRedisOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 250;
    this.backoffMs = opts.backoffMs ?? 1_000;
    const signal = new SharedArrayBuffer(4);
    this.flag = new Int32Array(signal);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(workerFile(), { workerData: { url, port: port2, signal }, transferList: [port2] });
    this.worker.unref();
    this.worker.on("error", (err) => {
      this.lastError = `state worker failed: ${err.message}`;
    });
  }

  /** Waits (asynchronously) until the connection is up, at most `ms`; true when it is. */
  async ready(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      try {
        this.call(["PING"], true);
        return true;
      } catch {
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /** One command, or several in one MULTI (their results as an array). Throws StateUnavailableError. */
  call(command: (string | number)[], force = false): unknown {
    return this.run([command], force);
  }

  multi(commands: (string | number)[][]): unknown[] {
    return this.run(commands, false) as unknown[];
  }

  private run(commands: (string | number)[][], force: boolean): unknown {
    const now = Date.now();
    if (!force && now < this.downUntil) throw new StateUnavailableError(this.lastError);
    const seq = ++this.seq;
    this.port.postMessage({ seq, commands });
    const deadline = now + this.timeoutMs;
    for (;;) {
      // Read before looking at the port: an answer posted in between changes it, and the wait returns at once.
      const seen = Atomics.load(this.flag, 0);
      const message = receiveMessageOnPort(this.port)?.message as { seq: number; ok: boolean; value?: unknown; error?: string } | undefined;
      if (message) {
        if (message.seq !== seq) continue; // the late answer of a call that timed out
        if (message.ok) {
          this.downUntil = 0;
          return message.value;
        }
        return this.fail(message.error ?? "error");
      }
      const left = deadline - Date.now();
      if (left <= 0) return this.fail(`no answer within ${this.timeoutMs} ms`);
      Atomics.wait(this.flag, 0, seen, left);
    }
  }

  private fail(error: string): never {
    this.lastError = error;
    this.downUntil = Date.now() + this.backoffMs;
    throw new StateUnavailableError(error);
  }

  async close(): Promise<void> {
    this.port.postMessage("close");
    this.port.close();
    await this.worker.terminate();
  }
}

/** The compiled worker next to this file, or (running from source) the TypeScript one. */
function workerFile(): URL {
  const js = new URL("./redis-worker.js", import.meta.url);
  return existsSync(fileURLToPath(js)) ? js : new URL("./redis-worker.ts", import.meta.url);
}
