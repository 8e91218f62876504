import type { RateLimit } from "./config.js";
import type { JudgedMessage } from "./judged-message.js";

const MAX_KEYS = 10_000;
const WINDOW_MS = 60_000;

/** A sliding one-minute window per budget (session, server or global). */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number,
  ) {}

  /** Counts the message; true when it is over the budget. */
  hit(m: JudgedMessage): boolean {
    const key = this.limit.per === "global" ? "" : this.limit.per === "server" ? m.server : `${m.server} ${m.session ?? ""}`;
    const now = this.now();
    let times = this.hits.get(key);
    if (!times) {
      times = [];
      if (this.hits.size >= MAX_KEYS) this.hits.delete(this.hits.keys().next().value as string);
      this.hits.set(key, times);
    }
    while (times.length > 0 && times[0]! <= now - WINDOW_MS) times.shift();
    if (times.length >= this.limit.perMinute) return true;
    times.push(now);
    return false;
  }
}
