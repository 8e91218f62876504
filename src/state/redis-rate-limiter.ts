import { createHash } from "node:crypto";
import type { RateLimit } from "../policy/config.js";
import type { JudgedMessage } from "../policy/judged-message.js";
import { RateLimiter, type RateLimitCounter, type RateLimitVerdict } from "../policy/rate-limiter.js";
import { StateUnavailableError, type AsyncRedis } from "./async-redis.js";
import { redactedUrl } from "./redis-pins.js";

/**
 * The same sliding minute as RateLimiter (hits in one-second slots, a hit leaves the window 59 to 60 s
 * after it was made), counted atomically in Redis by one script, on Redis's clock so that replicas with
 * skewed clocks agree. A budget is a hash of at most 60 slots that expires a minute after its last hit.
 */
const SPEND = `
local now = redis.call('TIME')
local slot = tonumber(now[1])
local all = redis.call('HGETALL', KEYS[1])
local total = 0
for i = 1, #all, 2 do
  local s = tonumber(all[i])
  if s == nil or s <= slot - 60 then redis.call('HDEL', KEYS[1], all[i]) else total = total + tonumber(all[i + 1]) end
end
if total >= tonumber(ARGV[1]) then return 1 end
redis.call('HINCRBY', KEYS[1], slot, 1)
redis.call('EXPIRE', KEYS[1], 61)
return 0
`;

export interface StateWarning {
  event: "state_unavailable";
  state: string;
  message: string;
}

const WARN_EVERY_MS = 10_000;

/**
 * Counters shared by replicas, asked asynchronously: only the message counted waits for Redis. Redis
 * unreachable or slower than the deadline: enforce mode denies what the limit covers (fail closed: a limit
 * that cannot be counted cannot be promised); monitor mode counts in this process alone. Either way the
 * message's record says it was decided without Redis, and a `state_unavailable` warning is written, at
 * most every 10 s.
 */
export class RedisRateLimiter implements RateLimitCounter {
  private readonly local: RateLimiter;
  private lastWarning = -Infinity;

  constructor(
    readonly limit: RateLimit,
    private readonly redis: AsyncRedis,
    private readonly enforcing: boolean,
    now: () => number,
    private readonly warn: (w: StateWarning) => void,
  ) {
    this.local = new RateLimiter(limit, now);
  }

  async check(m: JudgedMessage): Promise<RateLimitVerdict> {
    const key = this.limit.per === "global" ? "" : this.limit.per === "server" ? m.server : `${m.server} ${m.session ?? ""}`;
    const id = createHash("sha256").update(`${this.limit.name}\0${this.limit.per}\0${key}`).digest("hex");
    try {
      return { over: (await this.redis.call(["EVAL", SPEND, 1, `mcp-wiretap:rate:${id}`, this.limit.perMinute])) === 1, overflow: false };
    } catch (err) {
      if (!(err instanceof StateUnavailableError)) throw err;
      const where = redactedUrl(this.redis.url);
      this.warnOnce(`rate limit ${this.limit.name}: shared counters at ${where} unreachable (${err.message}); ${this.enforcing ? "denying what it covers (enforce mode fails closed)" : "counting in this replica alone (monitor mode)"}`);
      if (this.enforcing) return { over: true, overflow: false, reason: `shared rate-limit counters unreachable (${err.message}): denied, enforce mode fails closed` };
      return { ...this.local.check(m), unshared: `shared rate-limit counters unreachable (${err.message}): counted in this replica alone` };
    }
  }

  private warnOnce(message: string): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.warn({ event: "state_unavailable", state: redactedUrl(this.redis.url), message });
  }
}
