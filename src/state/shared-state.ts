import type { RateLimit } from "../policy/config.js";
import { PinStore } from "../policy/pin-store.js";
import type { RateLimitCounter } from "../policy/rate-limiter.js";
import { UsageError } from "../util/usage-error.js";
import { RedisPinStore, redactedUrl } from "./redis-pins.js";
import { RedisRateLimiter, type StateWarning } from "./redis-rate-limiter.js";
import { AsyncRedis } from "./async-redis.js";

export interface SharedState {
  pins: RedisPinStore;
  rateLimiter: (limit: RateLimit, ctx: { now: () => number; enforcing: boolean }) => RateLimitCounter;
  /** The URL, password redacted, for messages. */
  where: string;
  /** Set when Redis could not be reached at start (the proxy starts anyway; see docs/deploy.md). */
  problem: string | null;
  close(): Promise<void>;
}

/** How long start-up waits for Redis before going on without it (and saying so). */
const CONNECT_WAIT_MS = 3_000;

export function checkStateUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`--state ${JSON.stringify(redactedUrl(url))} is not a URL (expected redis://HOST:PORT/DB)`);
  }
  if (u.protocol !== "redis:" && u.protocol !== "rediss:") throw new UsageError("--state must be a redis:// or rediss:// URL");
}

/** `--state redis://HOST:PORT/DB`: pins and rate-limit counters shared by every replica using it. */
export async function openSharedState(
  url: string,
  opts: { localPins: string | null; warn: (w: StateWarning) => void },
): Promise<SharedState> {
  checkStateUrl(url);
  const redis = new AsyncRedis(url);
  const up = await redis.ready(CONNECT_WAIT_MS);
  let fallback: PinStore | null = null;
  try {
    fallback = opts.localPins ? new PinStore(opts.localPins) : null;
  } catch {
    // An unreadable local store only matters while Redis is down.
  }
  return {
    pins: new RedisPinStore(redis, fallback),
    rateLimiter: (limit, ctx) => new RedisRateLimiter(limit, redis, ctx.enforcing, ctx.now, opts.warn),
    where: redactedUrl(url),
    problem: up ? null : `shared state ${redactedUrl(url)} unreachable at start (${redis.lastError || "no answer"}); retrying in the background`,
    close: () => redis.close(),
  };
}
