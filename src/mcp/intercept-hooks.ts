import type { BodyDecoderMode } from "../body/index.js";
import { parseContentEncoding } from "../body/index.js";
import type { Charge, InspectBudget } from "../budget/inspect-budget.js";
import type { Exchange, RequestHold } from "../proxy/exchange.js";
import type { ResponseDecoder } from "./enforce.js";
import type { McpFlow } from "./flow.js";
import { peerKey } from "../proxy/peer-key.js";
import { allJudged, type Judged, type Judgement } from "./rpc-event.js";
import type { MessageHandler } from "./tracker.js";

/** `--intercept`'s holds of HTTP bodies and events (src/intercept/http-hold.ts). */
export interface InterceptHooks {
  request: RequestInterceptHook;
  response: ResponseInterceptHook;
  /** The exchange ended (its client went away, say): what it still holds is dropped. */
  ended(flow: string): void;
  /** One judged event (`out`: what would go out for it); a promise holds the stream. */
  event: (pipeline: MessageHandler, flow: McpFlow, judged: readonly Judged[], out: Buffer, judgeEdited: (body: Buffer) => Promise<Judged[]>) => Buffer | Promise<Buffer>;
}

/**
 * What `--intercept` does with a judged JSON response (src/intercept/http-hold.ts): `out` is what would go out
 * instead of the body (null: the body as received); returns what goes out instead (null: the body).
 */
export type ResponseInterceptHook = (pipeline: MessageHandler, flow: McpFlow, judged: readonly Judged[], out: Buffer | null, judgeEdited: (body: Buffer) => Promise<Judged[]>) => Promise<Buffer | null>;

/**
 * Makes the hold of one request body for `--intercept` (src/intercept/http-hold.ts): it wraps enforce mode's
 * hold (`inner`, or none in monitor mode); `judgeEdited` judges and records an edited body as this exchange's.
 */
export type RequestInterceptHook = (
  pipeline: MessageHandler,
  flow: McpFlow,
  limits: { maxBytes: number; charge?: Charge },
  inner: RequestHold | null,
  judgeEdited: (body: Buffer) => Promise<Judged[]>,
) => RequestHold;

/**
 * Monitor mode with `--intercept`: a JSON response is held whole and judged by its tap, an event stream (identity
 * coded: the proxy asks for that) is judged event by event as it is framed; each then goes on, or waits for a
 * person when the filter selects it. False when this response is left to the ordinary tap (an event stream a
 * server content-coded anyway).
 */
export function interceptMonitoredResponse(
  pipeline: MessageHandler,
  flow: McpFlow,
  mode: BodyDecoderMode,
  hooks: InterceptHooks,
  decoder: ResponseDecoder,
  judgeEdited: (body: Buffer) => Promise<Judged[]>,
  opts: { maxInspectBytes: number; budget?: InspectBudget },
): boolean {
  const ex = flow.ex;
  const charge = opts.budget ? { charge: opts.budget.charge(peerKey(ex, "server_to_client")) } : {};
  if (mode === "json") {
    const judged: Judgement[] = [];
    const tap = decoder((j) => judged.push(...j));
    ex.tapResponse(tap);
    ex.rewriteResponse({
      kind: "whole",
      maxBytes: opts.maxInspectBytes,
      ...charge,
      rewrite: async (body) => {
        if (body === null) return null;
        await tap.done;
        return hooks.response(pipeline, flow, await Promise.all(judged), null, judgeEdited);
      },
    });
    return true;
  }
  if (mode !== "sse" || contentCoded(ex.response!.headers)) return false;
  let take: ((judged: Judgement[]) => void) | null = null;
  const tap = decoder((j) => take?.(j));
  // The decoder is fed by the rewriter, event by event: this tap only ends it.
  ex.tapResponse({ data() {}, end: () => tap.end(), abort: (r) => (tap.abort ? tap.abort(r) : tap.end()) });
  // A legacy stream's session answers what the proxy drops on its POSTs through this.
  flow.injector = ex.rewriteResponse({
    kind: "events",
    maxEventBytes: opts.maxInspectBytes,
    ...charge,
    event: (raw) => {
      const judged: Judgement[] = [];
      take = (j) => judged.push(...j);
      try {
        tap.data(raw);
      } finally {
        take = null;
      }
      // A judgement waiting for shared state holds the event (and the stream behind it) until it comes.
      const all = allJudged(judged);
      return all instanceof Promise ? all.then((events) => hooks.event(pipeline, flow, events, raw, judgeEdited)) : hooks.event(pipeline, flow, all, raw, judgeEdited);
    },
    // Passed on as it comes, uninspected, as monitor mode does.
    oversized: () => void pipeline.invalid(flow.context("server_to_client"), "event larger than --max-inspect-bytes: forwarded uninspected", 0),
  });
  return true;
}

function contentCoded(h: Exchange["request"]["headers"]): boolean {
  const parsed = parseContentEncoding(h["content-encoding"]);
  return h["content-encoding"] !== undefined && !(parsed.ok && parsed.codings.length === 0);
}
