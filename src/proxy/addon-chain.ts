import type { Addon, BodyTap, Exchange, ExchangeError, TunnelInfo } from "./exchange.js";

/** An addon failed: which, in which hook, and (for a hook of one exchange) that exchange's id. */
export type AddonFailure = (addon: string, hook: string, err: unknown, flow?: string) => void;

/**
 * Runs the addons in order. An addon that throws is reported and skipped for that call: forwarding never
 * depends on an addon behaving.
 */
export class AddonChain {
  constructor(
    private readonly addons: readonly Addon[],
    private readonly onFailure: AddonFailure,
  ) {}

  requestHeaders(ex: Exchange): void {
    for (const a of this.addons) if (a.requestHeaders) this.guard(a.name, "requestHeaders", () => a.requestHeaders!(ex), ex.id);
  }

  responseHeaders(ex: Exchange): void {
    for (const a of this.addons) if (a.responseHeaders) this.guard(a.name, "responseHeaders", () => a.responseHeaders!(ex), ex.id);
  }

  exchangeEnd(ex: Exchange): void {
    for (const a of this.addons) if (a.exchangeEnd) this.guard(a.name, "exchangeEnd", () => a.exchangeEnd!(ex), ex.id);
  }

  tunnelEnd(t: TunnelInfo, stats: Parameters<NonNullable<Addon["tunnelEnd"]>>[1]): void {
    for (const a of this.addons) if (a.tunnelEnd) this.guard(a.name, "tunnelEnd", () => a.tunnelEnd!(t, stats));
  }

  async close(): Promise<void> {
    for (const a of this.addons) {
      if (!a.close) continue;
      try {
        await a.close();
      } catch (err) {
        this.onFailure(a.name, "close", err);
      }
    }
  }

  /** Fans body chunks out to taps; a tap that throws is dropped and reported. */
  fanOut(owner: string, taps: BodyTap[]): TapFanOut {
    return new TapFanOut(taps, (err) => this.onFailure(owner, "tap", err));
  }

  /** A hook that throws, or (exchangeEnd) returns a promise that rejects, is reported: never swallowed. */
  private guard(addon: string, hook: string, fn: () => void | Promise<void>, flow?: string): void {
    try {
      const pending = fn();
      if (pending) pending.catch((err: unknown) => this.onFailure(addon, hook, err, flow));
    } catch (err) {
      this.onFailure(addon, hook, err, flow);
    }
  }
}

export class TapFanOut implements BodyTap {
  private done = false;

  constructor(
    private readonly taps: BodyTap[],
    private readonly onError: (err: unknown) => void,
  ) {}

  get active(): boolean {
    return this.taps.length > 0 && !this.done;
  }

  data(chunk: Buffer): void {
    if (this.done) return;
    for (let i = 0; i < this.taps.length; i++) {
      try {
        this.taps[i]!.data(chunk);
      } catch (err) {
        this.onError(err);
        this.taps.splice(i--, 1);
      }
    }
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    for (const tap of this.taps) this.safely(() => tap.end());
  }

  abort(reason: ExchangeError): void {
    if (this.done) return;
    this.done = true;
    for (const tap of this.taps) this.safely(() => (tap.abort ? tap.abort(reason) : tap.end()));
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.onError(err);
    }
  }
}
