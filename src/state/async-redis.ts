/**
 * Redis commands that never block the event loop: the connection lives on this thread (ioredis), every call
 * returns a promise settled by its answer or by its own deadline, whichever comes first. Only the message
 * that asked waits; after a failure the store is treated as unreachable for a short while without asking,
 * so a hung server costs the messages in one deadline window, not one deadline each.
 */
import { Redis } from "ioredis";

export class StateUnavailableError extends Error {}

export interface AsyncRedisOptions {
  /**
   * How long one call may take before its caller decides without it (default 1 s: only the message asking
   * waits, so a Redis that is slow for a moment costs latency, not decisions made without it).
   */
  timeoutMs?: number;
  /** After a failure, calls fail at once for this long (default 1 s). */
  backoffMs?: number;
  /** Calls waiting for an answer at once; past that, new ones fail at once (default 4096). */
  maxInFlight?: number;
}

export class AsyncRedis {
  private readonly redis: Redis;
  private downUntil = 0;
  private inFlight = 0;
  /** Why the connection was dropped (a call past its deadline), until it is ready again. */
  private dropped: string | null = null;
  private readonly timeoutMs: number;
  private readonly backoffMs: number;
  private readonly maxInFlight: number;
  lastError = "not connected yet";

  constructor(
    readonly url: string,
    opts: AsyncRedisOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 1_000;
    this.backoffMs = opts.backoffMs ?? 1_000;
    this.maxInFlight = opts.maxInFlight ?? 4_096;
    this.redis = new Redis(url, {
      // Fail at once while disconnected rather than queue: every caller has a deadline of its own.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      retryStrategy: () => 500,
      lazyConnect: false,
    });
    this.redis.on("error", (err: Error) => {
      this.lastError = err.message;
    });
    this.redis.on("ready", () => {
      this.dropped = null;
      this.lastError = "";
      this.downUntil = 0;
    });
  }

  /** Waits until the connection is up, at most `ms`; true when it is. */
  async ready(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    for (;;) {
      try {
        await this.run(() => this.redis.ping(), true);
        return true;
      } catch {
        if (Date.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /** One command. Rejects with StateUnavailableError when Redis is down, slow past the deadline, or busy. */
  call(command: (string | number)[]): Promise<unknown> {
    return this.run(() => this.redis.call(String(command[0]), ...command.slice(1)));
  }

  /** Several commands in one MULTI: their results as an array. */
  multi(commands: (string | number)[][]): Promise<unknown[]> {
    return this.run(() =>
      this.redis
        .multi(commands.map(([name, ...args]) => [String(name).toLowerCase(), ...args.map(String)]))
        .exec()
        .then((results) => {
          if (!results) throw new Error("transaction aborted");
          return results.map(([err, value]) => {
            if (err) throw err;
            return value;
          });
        }),
    ) as Promise<unknown[]>;
  }

  private run(send: () => Promise<unknown>, force = false): Promise<unknown> {
    if (!force && Date.now() < this.downUntil) return Promise.reject(new StateUnavailableError(this.lastError || "unreachable"));
    if (this.redis.status !== "ready") return this.failed(this.lastError || this.redis.status);
    if (this.inFlight >= this.maxInFlight) return Promise.reject(new StateUnavailableError(`${this.maxInFlight} calls already waiting for an answer`));
    this.inFlight++;
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        this.inFlight--;
        this.failed(`no answer within ${this.timeoutMs} ms`).catch(reject);
        // Redis answers in order: the connection keeps every command sent on it until it is answered. One that
        // stopped answering is dropped (and made anew behind the backoff), which fails and frees what it holds,
        // so a hung server does not collect the commands of a whole outage.
        if (this.redis.status === "ready") {
          this.dropped = `no answer within ${this.timeoutMs} ms`;
          this.redis.disconnect(true);
        }
      }, this.timeoutMs);
      send().then(
        (value) => {
          if (settled) return; // the late answer of a call that timed out
          settled = true;
          clearTimeout(timer);
          this.inFlight--;
          resolve(value);
        },
        (err: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.inFlight--;
          // Failed because the connection was dropped for a late answer: that is the reason, not the drop.
          this.failed(this.dropped ?? err.message).catch(reject);
        },
      );
    });
  }

  private failed(error: string): Promise<never> {
    this.lastError = error;
    this.downUntil = Date.now() + this.backoffMs;
    return Promise.reject(new StateUnavailableError(error));
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
