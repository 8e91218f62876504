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

/**
 * The credentials each exchange carried (Authorization, cookies, API-key and token headers, secret query
 * parameters, secret members of its JSON-RPC messages, the credentials of the OAuth bodies it carried),
 * removed by value from every record of that exchange and of its MCP session: a server that quotes the
 * client's bearer token in an error, a token endpoint that repeats the refresh token in a header, an invalid
 * message that echoes a cookie. Names and patterns cannot recognise a credential in free text; its value can.
 *
 * Exchanges in flight are never forgotten (they are bounded by the open connections); ended ones (in count
 * and in characters) and sessions are kept in bounded first-in-first-out tables.
 */
export class ExchangeSecrets {
  private readonly live = new Map<string, Set<string>>();
  private readonly ended = new Map<string, Set<string>>();
  private endedCharCount = 0;
  private readonly maxEndedChars: number;
  private readonly sessions = new Map<string, string[]>();
  /** Exchanges whose bodies are still being read for credentials: what their records wait for. */
  private readonly reading = new Map<string, Promise<void>>();

  constructor(limits: { maxEndedChars?: number } = {}) {
    this.maxEndedChars = limits.maxEndedChars ?? MAX_ENDED_CHARS;
  }

  /** Characters of the credentials kept for ended exchanges. */
  get endedChars(): number {
    return this.endedCharCount;
  }

  /** Register first among the addons: it sees every request before anything is recorded of it. */
  addon(): { name: string; requestHeaders(ex: ExchangeStart): void; exchangeEnd(ex: { id: string }): void } {
    return {
      name: "exchange-secrets",
      requestHeaders: (ex) => this.begin(ex),
      exchangeEnd: (ex) => this.end(ex.id),
    };
  }

  begin(ex: ExchangeStart): void {
    const values = [...headerCredentials(ex.request.headers), ...queryCredentials(ex.request.path)];
    this.live.set(ex.id, new Set(values));
    if (values.length === 0) return;
    const session = ex.request.headers["mcp-session-id"];
    if (typeof session === "string") this.addToSession(session, values);
  }

  /** Credentials found later in the exchange (secret members of its messages, of its bodies). */
  add(flow: string, session: string | null, values: Iterable<string>): void {
    const list = [...values];
    if (list.length === 0) return;
    const known = this.live.get(flow);
    if (known) for (const v of list) known.add(v);
    else this.addToEnded(flow, list);
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
    const known = this.live.get(flow);
    if (!known) return;
    this.live.delete(flow);
    if (known.size > 0) this.addToEnded(flow, [...known]);
  }

  /** The record with the credentials of its exchange and session removed (the same object when none occur). */
  scrub<T extends Record<string, unknown>>(record: T): T {
    const flow = typeof record.flow === "string" ? record.flow : undefined;
    const session = typeof record.session === "string" ? record.session : undefined;
    const fromFlow = flow === undefined ? undefined : (this.live.get(flow) ?? this.ended.get(flow));
    const fromSession = session === undefined ? undefined : this.sessions.get(session);
    const values = [...(fromFlow ?? []), ...(fromSession ?? [])];
    return values.length === 0 ? record : scrubValues(record, longestFirst(values));
  }

  private addToEnded(flow: string, values: readonly string[]): void {
    let known = this.ended.get(flow);
    if (!known) this.ended.set(flow, (known = new Set()));
    for (const v of values) {
      if (known.has(v)) continue;
      known.add(v);
      this.endedCharCount += v.length;
    }
    // The oldest go first; the newest exchange stays whatever it holds (its records are being written).
    while (this.ended.size > MAX_ENDED || (this.endedCharCount > this.maxEndedChars && this.ended.size > 1)) {
      const [oldest, list] = this.ended.entries().next().value as [string, Set<string>];
      this.ended.delete(oldest);
      for (const v of list) this.endedCharCount -= v.length;
    }
  }

  private addToSession(session: string, values: readonly string[]): void {
    const known = this.sessions.get(session) ?? [];
    const merged = [...new Set([...values, ...known])].slice(0, MAX_VALUES_PER_SESSION);
    this.sessions.delete(session);
    this.sessions.set(session, merged);
    if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}
