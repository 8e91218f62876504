import { nodeCrypto } from "../util/lazy-crypto.js";
import type { RateLimit } from "./config.js";
import type { JudgedMessage } from "./judged-message.js";

/** Budgets tracked per limit; beyond, new keys share one overflow budget. */
export const MAX_RATE_LIMIT_KEYS = 10_000;
const SLOTS = 60;
const SLOT_MS = 1_000;
const OVERFLOW_WARNING_EVERY_MS = 10_000;

/**
 * One budget: hits counted in one-second slots over the last 60 (a hit leaves the window 59 to 60 s
 * after it was made). Fixed size whatever the limit, so a busy key costs no more memory than a quiet one.
 */
class Budget {
  private readonly slots = new Uint32Array(SLOTS);
  private total = 0;
  /** The slot the counts are current for. */
  private slot = -Infinity;
  /** The slot of the latest counted hit: the budget is empty once it is 60 slots old. */
  lastHit = -Infinity;

  private advance(slot: number): void {
    if (slot - this.slot >= SLOTS) {
      this.slots.fill(0);
      this.total = 0;
    } else {
      for (let s = this.slot + 1; s <= slot; s++) {
        this.total -= this.slots[s % SLOTS]!;
        this.slots[s % SLOTS] = 0;
      }
    }
    this.slot = Math.max(this.slot, slot);
  }

  /** Counts a hit unless the budget is spent; true when it is spent. */
  spend(slot: number, perMinute: number): boolean {
    this.advance(slot);
    if (this.total >= perMinute) return true;
    this.slots[this.slot % SLOTS]!++;
    this.total++;
    this.lastHit = this.slot;
    return false;
  }
}

export interface RateLimitVerdict {
  over: boolean;
  /** Counted in the shared overflow budget: every tracked key was still active. */
  overflow: boolean;
  /** Set when the verdict is not a count (the shared counters could not be read): why. */
  reason?: string;
  /** Set when the message was counted in this process alone, the shared counters being unreachable: why. */
  unshared?: string;
}

/** What the policy asks of a rate limit's counters: this file's RateLimiter, or the shared one of src/state/. */
export interface RateLimitCounter {
  readonly limit: RateLimit;
  /** Shared counters answer asynchronously: only the message counted waits for them. */
  check(m: JudgedMessage): RateLimitVerdict | Promise<RateLimitVerdict>;
}

export interface RateLimitOverflowWarning {
  event: "rate_limit_overflow";
  limit: string;
  message: string;
}

/**
 * A sliding one-minute window per budget (session, server or global). A flood of new keys never evicts
 * a key whose window still holds hits (that would reset its count): only expired keys make room, and
 * when every tracked key is active, new ones share one overflow budget under the same limit.
 */
export class RateLimiter implements RateLimitCounter {
  /** Least recently counted first (a counted key moves to the end), so expired keys are at the front. */
  private readonly budgets = new Map<string, Budget>();
  private readonly overflowBudget = new Budget();
  private lastWarning = -Infinity;

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number,
    private readonly warn: (w: RateLimitOverflowWarning) => void = () => undefined,
  ) {}

  get trackedKeys(): number {
    return this.budgets.size;
  }

  /** Counts the message (unless over); says whether it is over the budget. */
  hit(m: JudgedMessage): boolean {
    return this.check(m).over;
  }

  check(m: JudgedMessage): RateLimitVerdict {
    const key = budgetKey(this.limit.per === "global" ? "" : this.limit.per === "server" ? m.server : `${m.server} ${m.session ?? ""}`);
    const now = this.now();
    const slot = Math.floor(now / SLOT_MS);
    const budget = this.budgets.get(key) ?? this.admit(key, slot);
    if (!budget) {
      this.warnOverflow(now);
      return { over: this.overflowBudget.spend(slot, this.limit.perMinute), overflow: true };
    }
    const over = budget.spend(slot, this.limit.perMinute);
    if (!over) {
      this.budgets.delete(key);
      this.budgets.set(key, budget);
    }
    return { over, overflow: false };
  }

  /** A budget for a new key, making room from expired keys only; null when every tracked key is active. */
  private admit(key: string, slot: number): Budget | null {
    while (this.budgets.size >= MAX_RATE_LIMIT_KEYS) {
      const [oldestKey, oldest] = this.budgets.entries().next().value as [string, Budget];
      if (slot - oldest.lastHit < SLOTS) return null;
      this.budgets.delete(oldestKey);
    }
    const budget = new Budget();
    this.budgets.set(key, budget);
    return budget;
  }

  private warnOverflow(now: number): void {
    if (now - this.lastWarning < OVERFLOW_WARNING_EVERY_MS) return;
    this.lastWarning = now;
    this.warn({
      event: "rate_limit_overflow",
      limit: this.limit.name,
      message: `rate limit ${this.limit.name}: ${MAX_RATE_LIMIT_KEYS} ${this.limit.per} budgets are active within the minute; new ones share one overflow budget of ${this.limit.perMinute} per minute (a flood of new ${this.limit.per} ids?)`,
    });
  }
}

/** Longer keys than this are kept as their SHA-256: a peer chooses its session id's length, not what it costs us. */
const MAX_KEY_CHARS = 128;

function budgetKey(key: string): string {
  return key.length <= MAX_KEY_CHARS ? key : `sha256:${nodeCrypto().hash("sha256", key, "base64")}`;
}
