import { PEER_SHARE_DIVISOR } from "../budget/inspect-budget.js";
import type { LogSink } from "../log/logger.js";
import type { PayloadOptions } from "../records/rpc-record.js";
import { parseInterceptFilter } from "./filter.js";
import { HoldQueue } from "./hold-queue.js";
import { DEFAULT_INTERCEPT_MAX_BYTES, DEFAULT_INTERCEPT_MAX_ENTRIES, Interceptor } from "./interceptor.js";

/** `--intercept FILTER` and `--intercept-timeout`, as the commands pass them on. */
export interface InterceptSettings {
  filter: string;
  timeoutMs: number;
  /** Bytes of held messages at most (and, on stdio, of lines waiting behind them). */
  maxBytes?: number;
}

/** The interceptor of a proxy or a stdio launch, writing its records to `sink`. */
/** `maxInspectBytes`: the largest message the proxy judges; an edit past it is refused. */
export function createInterceptor(settings: InterceptSettings, sink: Pick<LogSink, "logger" | "secrets">, payloads: PayloadOptions, maxInspectBytes: number): Interceptor {
  const filter = parseInterceptFilter(settings.filter);
  const maxBytes = settings.maxBytes ?? DEFAULT_INTERCEPT_MAX_BYTES;
  const maxEntries = DEFAULT_INTERCEPT_MAX_ENTRIES;
  // One peer (a client, a server) holds an eighth of the queue, as of the inspection budget, but always room for
  // a message of the largest size judged: a hostile one that floods it cannot get everyone else's dropped.
  const maxPeerEntries = Math.max(1, Math.floor(maxEntries / PEER_SHARE_DIVISOR));
  const maxPeerBytes = Math.max(Math.floor(maxBytes / PEER_SHARE_DIVISOR), Math.min(maxBytes, maxInspectBytes));
  const queue = new HoldQueue({ maxBytes, maxEntries, maxPeerBytes, maxPeerEntries, timeoutMs: settings.timeoutMs });
  return new Interceptor({
    filter,
    queue,
    write: (record, loud) => sink.logger[loud ? "warn" : "info"](record),
    scrub: (record) => sink.secrets.scrub(record),
    payloads,
    maxEditBytes: maxInspectBytes,
  });
}
