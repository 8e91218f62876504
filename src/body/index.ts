import type { BodyTap } from "../proxy/exchange.js";
import { createContentDecoder, guardedDecoderTap, parseContentEncoding } from "./content-decoding.js";
import { collectBody, maxDepth, parseJsonBody } from "./json-body.js";
import { describeError, type BodyProblem } from "./problem.js";
import { createSseDecoder, type SseEvent, type SseRecord } from "./sse-decoder.js";

export type { BodyProblem, BodyProblemCode } from "./problem.js";
export type { SseDecoder, SseDecoderOptions, SseEvent, SseRecord } from "./sse-decoder.js";
export type { ContentCoding, ContentDecoder, ContentDecoderOptions } from "./content-decoding.js";
export type { BodyCollector, JsonParse } from "./json-body.js";
export { createSseDecoder } from "./sse-decoder.js";
export { createContentDecoder, guardedDecoderTap, parseContentEncoding, zstdSupported } from "./content-decoding.js";
export { collectBody, maxDepth, parseJsonBody, parseJsonText } from "./json-body.js";

/** Largest body or SSE event decoded by default (`--max-inspect-bytes`); larger ones are forwarded, not inspected. */
export const DEFAULT_MAX_INSPECT_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_STREAM_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_MAX_JSON_DEPTH = 256;

export interface BodyDecoderOptions {
  /** `Content-Type` header value. */
  contentType: string | readonly string[] | undefined;
  /** `Content-Encoding` header value. */
  contentEncoding: string | readonly string[] | undefined;
  /** Largest (decoded) JSON body parsed; a bigger one is reported as `body_truncated`. */
  maxInspectBytes: number;
  /** Largest single SSE event; a bigger one is reported as `event_too_large` and dropped. */
  maxEventBytes: number;
  /**
   * Cap on the decoded size of a compressed event stream (decompression-bomb guard). Uncompressed
   * streams are never capped: memory is bounded per event. Default 1 GiB.
   */
  maxStreamBytes?: number;
  /** Deeper JSON is reported as `json_too_deep` and not handed on, so recursive walkers stay safe. Default 256. */
  maxJsonDepth?: number;
  /** Also hand on SSE comments (`: ping`) as `sse_comment` messages. */
  includeComments?: boolean;
  onMessage(message: BodyMessage): void;
  onProblem(problem: BodyProblem): void;
}

export type BodyMessage =
  | { kind: "json"; value: unknown; bytes: number }
  | { kind: "sse"; event: SseEvent }
  /** An SSE block with `id:` / `retry:` but no `data:` (no event, but it moves the last event id or retry delay). */
  | { kind: "sse_meta"; id?: string; retry?: number; byteOffset: number }
  | { kind: "sse_comment"; comment: string };

export type BodyDecoderMode = "json" | "sse" | "ignored";

export interface BodyDecoderTap extends BodyTap {
  readonly mode: BodyDecoderMode;
  /** Settles once every message and problem of this body has been reported (zlib finishes asynchronously). */
  readonly done: Promise<void>;
}

/** `type/subtype` in lower case, without parameters; undefined when absent or malformed. */
export function mediaTypeOf(contentType: string | readonly string[] | undefined): string | undefined {
  const value = typeof contentType === "string" ? contentType : contentType?.[0];
  const essence = value?.split(";")[0]?.trim().toLowerCase();
  return essence && /^[^\s/]+\/[^\s/]+$/.test(essence) ? essence : undefined;
}

export function bodyModeFor(contentType: string | readonly string[] | undefined): BodyDecoderMode {
  const media = mediaTypeOf(contentType);
  if (media === "text/event-stream") return "sse";
  if (media === "application/json" || media?.endsWith("+json")) return "json";
  return "ignored";
}

interface ModeSink {
  data(chunk: Buffer): void;
  /** The decoder problem `decode_limit` is the sink's to interpret; others are reported as they are. */
  problem(problem: BodyProblem): void;
  end(aborted: boolean): void;
}

/** Routes a body by media type: event streams and JSON are decoded, everything else is ignored. */
export function createBodyDecoder(options: BodyDecoderOptions): BodyDecoderTap {
  const mode = bodyModeFor(options.contentType);
  if (mode === "ignored") return ignoredTap();
  const report = (problem: BodyProblem): void => {
    try {
      options.onProblem(problem);
    } catch {
      // A problem sink that throws has nowhere left to report to.
    }
  };
  const emit = (message: BodyMessage): void => {
    try {
      options.onMessage(message);
    } catch (error) {
      report({ code: "decoder_failed", message: `message consumer threw: ${describeError(error)}` });
    }
  };

  const encoding = parseContentEncoding(options.contentEncoding);
  if (!encoding.ok) {
    report(encoding.problem);
    return ignoredTap();
  }
  const sink = mode === "sse" ? sseSink(options, emit, report) : jsonSink(options, emit, report);
  let aborted = false;
  const created = createContentDecoder(options.contentEncoding, {
    maxBytes: decodedByteCap(mode, encoding.codings.length > 0, options),
    maxRatio: BOMB_RATIO,
    onData: (chunk) => sink.data(chunk),
    onProblem: (problem) => sink.problem(problem),
    onEnd: () => sink.end(aborted),
  });
  if (!created.ok) {
    report(created.problem);
    return ignoredTap();
  }
  const decoder = created.decoder;
  const tap = guardedDecoderTap(
    decoder,
    (error) => report({ code: "decoder_failed", message: describeError(error) }),
    () => (aborted = true),
  );
  return { mode, done: decoder.done, ...tap };
}

/**
 * Ordinary JSON and event streams compress tens to one; a body that keeps expanding 1000:1 past 64 MiB is a
 * decompression bomb. Stopping it there saves seconds of CPU decoding up to the 1 GiB stream cap.
 */
const BOMB_RATIO = { ratio: 1000, afterBytes: 64 * 1024 * 1024 };

/** Identity bodies need no cap here: the SSE decoder bounds each event and the JSON collector keeps a prefix. */
function decodedByteCap(mode: "json" | "sse", compressed: boolean, options: BodyDecoderOptions): number {
  if (!compressed) return Infinity;
  return mode === "sse" ? (options.maxStreamBytes ?? DEFAULT_MAX_STREAM_BYTES) : options.maxInspectBytes;
}

function sseSink(
  options: BodyDecoderOptions,
  emit: (message: BodyMessage) => void,
  report: (problem: BodyProblem) => void,
): ModeSink {
  const sse = createSseDecoder({
    maxEventBytes: options.maxEventBytes,
    includeComments: options.includeComments ?? false,
    onRecord: (record: SseRecord) => {
      switch (record.type) {
        case "event":
          return emit({ kind: "sse", event: record.event });
        case "comment":
          return emit({ kind: "sse_comment", comment: record.comment });
        case "meta": {
          const { type: _type, ...meta } = record;
          return emit({ kind: "sse_meta", ...meta });
        }
        case "incomplete":
          return report({
            code: "sse_incomplete_event",
            message: `stream ended mid-event (${record.bytes} bytes from byte ${record.byteOffset}, no blank line)`,
          });
        case "problem":
          return report({ code: record.code, message: record.message });
      }
    },
  });
  return {
    data: (chunk) => sse.data(chunk),
    problem: report,
    // An aborted stream also ends: whatever was mid-event is reported as incomplete.
    end: () => sse.end(),
  };
}

function jsonSink(
  options: BodyDecoderOptions,
  emit: (message: BodyMessage) => void,
  report: (problem: BodyProblem) => void,
): ModeSink {
  const limit = options.maxInspectBytes;
  const collector = collectBody(limit);
  /** The decoder's own words when it stopped at the limit: they show the expansion (a bomb, or a large body). */
  let cutByDecoder: string | null = null;
  let decodeFailed = false;
  return {
    data: (chunk) => collector.data(chunk),
    problem: (problem) => {
      if (problem.code === "decode_limit") {
        cutByDecoder = problem.message;
        return;
      }
      decodeFailed = true;
      report(problem);
    },
    end: (aborted) => {
      // A body cut off by the connection or by corrupt compression is not JSON worth parsing.
      if (aborted || decodeFailed) return;
      collector.end();
      const parsed = parseJsonBody(collector.body(), { truncated: collector.truncated || cutByDecoder !== null, limit });
      if (!parsed.ok) {
        const why = parsed.code === "body_truncated" && cutByDecoder !== null ? ` (${cutByDecoder})` : "";
        return report({ code: parsed.code, message: `${parsed.error}${why}` });
      }
      const depthLimit = options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
      if (maxDepth(parsed.value, depthLimit) > depthLimit) {
        return report({ code: "json_too_deep", message: `JSON body nests deeper than ${depthLimit} levels` });
      }
      emit({ kind: "json", value: parsed.value, bytes: collector.totalBytes });
    },
  };
}

function ignoredTap(): BodyDecoderTap {
  return { mode: "ignored", done: Promise.resolve(), data() {}, end() {}, abort() {} };
}
