import { BOMB_RATIO, createContentDecoder, guardedDecoderTap, type BodyProblem, type ContentDecoder } from "../body/index.js";
import type { BodyTap, Exchange, ExchangeError } from "./exchange.js";

/** How a body's decoding ended for one subscriber. */
export interface DecodedEnd {
  /** Why its decoded bytes stop short: its own limit reached (`decode_limit`), or decoding failed. */
  problem: BodyProblem | null;
  /** The body was cut off before its end. */
  aborted: boolean;
}

export interface DecodedSubscriber {
  /** Most decoded bytes this subscriber takes; past them it gets a `decode_limit` problem and nothing more. */
  limit: number;
  /** Most bytes as sent this subscriber reads (a larger body it ignores): past them, it gets `decode_limit`. */
  maxRawBytes?: number;
  data?(chunk: Buffer): void;
  end(outcome: DecodedEnd): void;
}

/**
 * One body of one exchange, its content coding undone once for every addon that reads it (mitmproxy's model:
 * addons annotate one flow). Subscribe from the hook that sees the body's head (`requestHeaders` or
 * `responseHeaders`); decoding starts with the first subscriber.
 */
export interface DecodedBody {
  subscribe(subscriber: DecodedSubscriber): void;
}

/** The decoded-body source of `ex`'s request or response body, made by the first addon that asks for it. */
export function decodedBody(ex: Exchange, direction: "request" | "response"): DecodedBody {
  const key = `decoded-body:${direction}`;
  const existing = ex.notes.get(key) as DecodedBody | undefined;
  if (existing) return existing;
  const source = new DecodedBodySource(direction === "request" ? ex.request.headers["content-encoding"] : ex.response?.headers["content-encoding"]);
  ex.notes.set(key, source);
  if (direction === "request") ex.tapRequest(source);
  else ex.tapResponse(source);
  return source;
}

interface Subscription {
  readonly subscriber: DecodedSubscriber;
  given: number;
  problem: BodyProblem | null;
  ended: boolean;
}

/** A body tap that decodes once, on the first byte, with room for the most any subscriber takes. */
class DecodedBodySource implements DecodedBody, BodyTap {
  private readonly subscriptions: Subscription[] = [];
  private decoder: BodyTap | null = null;
  private content: ContentDecoder | null = null;
  private rawBytes = 0;
  private aborted = false;

  constructor(private readonly contentEncoding: string | readonly string[] | undefined) {}

  subscribe(subscriber: DecodedSubscriber): void {
    const s: Subscription = { subscriber, given: 0, problem: null, ended: false };
    if (this.decoder) {
      // Too late: part of the body went by. Said so, rather than handing on a body with its start missing.
      s.ended = true;
      this.safely(s, () => subscriber.end({ problem: { code: "decoder_failed", message: "subscribed after the body began" }, aborted: false }));
      return;
    }
    this.subscriptions.push(s);
  }

  data(chunk: Buffer): void {
    this.rawBytes += chunk.length;
    const decoder = this.start();
    for (const s of this.subscriptions) {
      if (s.subscriber.maxRawBytes !== undefined && this.rawBytes > s.subscriber.maxRawBytes) {
        s.problem ??= { code: "decode_limit", message: `body exceeds ${s.subscriber.maxRawBytes} bytes as sent; not decoded` };
      }
    }
    if (!this.stopIfUnwanted()) decoder.data(chunk);
  }

  /** Once no subscriber wants more of the body, decoding stops (each is told why at its end). */
  private stopIfUnwanted(): boolean {
    if (!this.subscriptions.every((s) => s.problem !== null)) return false;
    this.content?.abort();
    return true;
  }

  end(): void {
    this.start().end();
  }

  abort(reason: ExchangeError): void {
    this.aborted = true;
    const decoder = this.start();
    if (decoder.abort) decoder.abort(reason);
    else decoder.end();
  }

  private start(): BodyTap {
    if (this.decoder) return this.decoder;
    const limit = Math.max(0, ...this.subscriptions.map((s) => s.subscriber.limit));
    const created = createContentDecoder(this.contentEncoding, {
      maxBytes: limit,
      maxRatio: BOMB_RATIO,
      onData: (chunk) => this.emit(chunk),
      onProblem: (problem) => this.fail(problem),
      onEnd: () => this.finish(),
    });
    if (!created.ok) {
      this.fail(created.problem);
      this.finish();
      this.decoder = { data() {}, end() {} };
      return this.decoder;
    }
    const decoder: ContentDecoder = created.decoder;
    this.content = decoder;
    this.decoder = guardedDecoderTap(decoder, (error) => this.fail({ code: "decoder_failed", message: String(error) }));
    return this.decoder;
  }

  private emit(chunk: Buffer): void {
    for (const s of this.subscriptions) {
      if (s.problem || s.ended) continue;
      const room = s.subscriber.limit - s.given;
      const allowed = chunk.length <= room ? chunk : chunk.subarray(0, Math.max(room, 0));
      s.given += allowed.length;
      if (allowed.length > 0) this.safely(s, () => s.subscriber.data?.(allowed));
      if (allowed.length < chunk.length) {
        s.problem = {
          code: "decode_limit",
          message: `decoded body exceeds ${s.subscriber.limit} bytes (from ${this.rawBytes} compressed bytes); decoding stopped`,
        };
      }
    }
    this.stopIfUnwanted();
  }

  private fail(problem: BodyProblem): void {
    for (const s of this.subscriptions) if (!s.ended) s.problem ??= problem;
  }

  private finish(): void {
    for (const s of this.subscriptions) {
      if (s.ended) continue;
      s.ended = true;
      this.safely(s, () => s.subscriber.end({ problem: s.problem, aborted: this.aborted }));
    }
  }

  /** A subscriber that throws is told so once, at its end, and gets nothing more: the others go on. */
  private safely(s: Subscription, action: () => void): void {
    try {
      action();
    } catch (error) {
      s.problem ??= { code: "decoder_failed", message: `body consumer threw: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
}
