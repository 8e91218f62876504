import { headerCredentials, longestFirst, queryCredentials, scrubValues } from "./redact.js";

/** What this table reads of an exchange (the proxy's `Exchange` has it; the log does not depend on the proxy). */
interface ExchangeStart {
  id: string;
  request: { path: string; headers: Record<string, string | string[] | undefined> };
}

/** Ended exchanges whose credentials are still known: records written late (an `auth` record after its bodies are decoded). */
const MAX_ENDED = 10_000;
/** Characters of those credentials at most (a body may carry many, and long ones). */
const MAX_ENDED_CHARS = 32 * 1024 * 1024;
/** Sessions whose credentials are known, and values kept for each. */
const MAX_SESSIONS = 10_000;
const MAX_VALUES_PER_SESSION = 16;
/** Characters of the sessions' credentials at most, all sessions together (the oldest session goes first). */
const MAX_SESSION_CHARS = 32 * 1024 * 1024;
/**
 * Values an exchange keeps from its messages and bodies, and their characters: a real exchange carries a few
 * credentials (each in a few spellings); a stream that never ends (a GET stream, a stdio launch) must not grow
 * the table, nor make every record's scrub try thousands of values. The most recent are kept (an echo follows
 * what it echoes); the request's headers and query, and `--secret-values`, are always kept.
 */
const MAX_VALUES_PER_EXCHANGE = 64;
const MAX_CHARS_PER_EXCHANGE = 1024 * 1024;

/**
 * The credentials each exchange carried (Authorization, cookies, API-key and token headers, secret query
 * parameters, secret members of its JSON-RPC messages, the credentials of the OAuth bodies it carried),
 * removed by value from every record of that exchange and of its MCP session: a server that quotes the
 * client's bearer token in an error, a token endpoint that repeats the refresh token in a header, an invalid
 * message that echoes a cookie. Names and patterns cannot recognise a credential in free text; its value can.
 *
 * Exchanges in flight are never forgotten (they are bounded by the open connections, and each holds a bounded
 * set of values); ended ones (in count and in characters) and sessions are kept in bounded first-in-first-out
 * tables.
 */
export class ExchangeSecrets {
  private readonly live = new Map<string, Held>();
  private liveCharCount = 0;
  private readonly ended = new Map<string, Held>();
  private endedCharCount = 0;
  private readonly maxEndedChars: number;
  private readonly sessions = new Map<string, string[]>();
  private sessionCharCount = 0;
  /** Exchanges whose bodies are still being read for credentials: what their records wait for. */
  private readonly reading = new Map<string, Promise<void>>();

  constructor(limits: { maxEndedChars?: number } = {}) {
    this.maxEndedChars = limits.maxEndedChars ?? MAX_ENDED_CHARS;
  }

  /** Characters of the credentials kept for ended exchanges. */
  get endedChars(): number {
    return this.endedCharCount;
  }

  /** Characters of every credential held: live exchanges, ended ones and sessions. */
  get heldChars(): number {
    return this.liveCharCount + this.endedCharCount + this.sessionCharCount;
  }

  /** Register first among the addons: it sees every request before anything is recorded of it. */
  addon(): { name: string; requestHeaders(ex: ExchangeStart): void; exchangeEnd(ex: { id: string }): void } {
    return {
      name: "exchange-secrets",
      requestHeaders: (ex) => this.begin(ex),
      exchangeEnd: (ex) => this.end(ex.id),
    };
  }

  /**
   * Known credentials (`values`: a replay's command-line headers), registered with each exchange as it starts
   * and scrubbed by value from its records; no addon when there are none.
   */
  knownValuesAddon(values: readonly string[] | undefined): { name: string; requestHeaders(ex: ExchangeStart): void }[] {
    const list = (values ?? []).filter((v) => v.length > 0);
    if (list.length === 0) return [];
    return [
      {
        name: "known-secrets",
        requestHeaders: (ex) => {
          const session = ex.request.headers["mcp-session-id"];
          this.add(ex.id, typeof session === "string" ? session : null, list, false);
        },
      },
    ];
  }

  begin(ex: ExchangeStart): void {
    const values = [...headerCredentials(ex.request.headers), ...queryCredentials(ex.request.path)];
    const held = new Held();
    this.liveCharCount += held.pin(values);
    this.live.set(ex.id, held);
    if (values.length === 0) return;
    const session = ex.request.headers["mcp-session-id"];
    if (typeof session === "string") this.addToSession(session, values);
  }

  /**
   * Credentials found later in the exchange (secret members of its messages, of its bodies). `bounded: false`
   * for values the user gave (`--secret-values`): a peer sending many credentials must not crowd them out.
   */
  add(flow: string, session: string | null, values: Iterable<string>, bounded = true): void {
    const list = [...values];
    if (list.length === 0) return;
    const live = this.live.get(flow);
    if (live) this.liveCharCount += bounded ? live.learn(list) : live.pin(list);
    else this.addToEnded(flow, list, bounded);
    if (session !== null) this.addToSession(session, list);
  }

  /**
   * Credentials of the exchange that reading one of its bodies will give (its decoding may end after the
   * exchange): records written at the exchange's end wait for `known(flow)` first. Never rejects.
   */
  willLearn(flow: string, values: Promise<Iterable<string>>): void {
    const before = this.reading.get(flow) ?? Promise.resolve();
    const read = values.then(
      (list) => this.add(flow, null, list),
      () => undefined,
    );
    const all = Promise.all([before, read]).then(() => {
      if (this.reading.get(flow) === all) this.reading.delete(flow);
    });
    this.reading.set(flow, all);
  }

  /** Settles once every body reading of the exchange expected so far is done; undefined when none is under way. */
  known(flow: string): Promise<void> | undefined {
    return this.reading.get(flow);
  }

  end(flow: string): void {
    const held = this.live.get(flow);
    if (!held) return;
    this.live.delete(flow);
    this.liveCharCount -= held.chars;
    if (held.size > 0) {
      this.ended.set(flow, held);
      this.endedCharCount += held.chars;
      this.evictEnded();
    }
  }

  /** The record with the credentials of its exchange and session removed (the same object when none occur). */
  scrub<T extends Record<string, unknown>>(record: T): T {
    const flow = typeof record.flow === "string" ? record.flow : undefined;
    const session = typeof record.session === "string" ? record.session : undefined;
    const fromFlow = flow === undefined ? undefined : (this.live.get(flow) ?? this.ended.get(flow));
    const fromSession = session === undefined ? undefined : this.sessions.get(session);
    const values = [...(fromFlow?.values() ?? []), ...(fromSession ?? [])];
    return values.length === 0 ? record : scrubValues(record, longestFirst(values));
  }

  private addToEnded(flow: string, values: readonly string[], bounded: boolean): void {
    let held = this.ended.get(flow);
    if (!held) this.ended.set(flow, (held = new Held()));
    this.endedCharCount += bounded ? held.learn(values) : held.pin(values);
    this.evictEnded();
  }

  /** The oldest go first; the newest exchange stays whatever it holds (its records are being written). */
  private evictEnded(): void {
    while (this.ended.size > MAX_ENDED || (this.endedCharCount > this.maxEndedChars && this.ended.size > 1)) {
      const [oldest, held] = this.ended.entries().next().value as [string, Held];
      this.ended.delete(oldest);
      this.endedCharCount -= held.chars;
    }
  }

  private addToSession(session: string, values: readonly string[]): void {
    const known = this.sessions.get(session) ?? [];
    const fitting = values.filter((v) => v.length <= MAX_CHARS_PER_EXCHANGE);
    const merged = [...new Set([...fitting, ...known])].slice(0, MAX_VALUES_PER_SESSION);
    this.forgetSession(session);
    this.sessions.set(session, merged);
    this.sessionCharCount += charsOf(merged);
    // The oldest go first; the newest session stays whatever it holds (its records are being written).
    while (this.sessions.size > MAX_SESSIONS || (this.sessionCharCount > MAX_SESSION_CHARS && this.sessions.size > 1)) {
      this.forgetSession(this.sessions.keys().next().value as string);
    }
  }

  private forgetSession(session: string): void {
    const known = this.sessions.get(session);
    if (!known) return;
    this.sessions.delete(session);
    this.sessionCharCount -= charsOf(known);
  }
}

/**
 * One exchange's values: the pinned ones (its request's headers and query, `--secret-values`) are kept for its
 * life; the ones learned from its messages and bodies are kept most recent first, bounded in count and chars.
 */
class Held {
  private readonly pinned = new Set<string>();
  private readonly recent = new Set<string>();
  private recentChars = 0;
  private pinnedChars = 0;

  get chars(): number {
    return this.pinnedChars + this.recentChars;
  }

  get size(): number {
    return this.pinned.size + this.recent.size;
  }

  *values(): Iterable<string> {
    yield* this.pinned;
    yield* this.recent;
  }

  /** Keeps the values for the exchange's life; returns the characters added. */
  pin(values: readonly string[]): number {
    const before = this.chars;
    for (const v of values) {
      if (this.pinned.has(v)) continue;
      if (this.recent.delete(v)) this.recentChars -= v.length;
      this.pinned.add(v);
      this.pinnedChars += v.length;
    }
    return this.chars - before;
  }

  /** Keeps the values as the most recent learned, the oldest learned going first; returns the characters added (negative when fewer). */
  learn(values: readonly string[]): number {
    const before = this.chars;
    for (const v of values) {
      if (this.pinned.has(v) || v.length > MAX_CHARS_PER_EXCHANGE) continue;
      if (this.recent.delete(v)) this.recentChars -= v.length;
      this.recent.add(v);
      this.recentChars += v.length;
      while (this.recent.size > MAX_VALUES_PER_EXCHANGE || this.recentChars > MAX_CHARS_PER_EXCHANGE) {
        const oldest = this.recent.values().next().value as string;
        this.recent.delete(oldest);
        this.recentChars -= oldest.length;
      }
    }
    return this.chars - before;
  }
}

function charsOf(values: readonly string[]): number {
  let n = 0;
  for (const v of values) n += v.length;
  return n;
}
