import { redactText } from "../log/redact/text.js";
import type { ChargeFor } from "../budget/inspect-budget.js";
import { overBudgetMessage } from "../budget/inspect-budget.js";
import type { BodyTap } from "./body-tap.js";
import { duplicateMemberDoubt } from "./duplicate-members.js";
import { readJsonBody, type DecodedBytes, type JsonReading } from "./body-reading.js";
import { collectBody } from "./json-body.js";
import { describeError, type BodyProblem } from "./problem.js";
import { createSseDecoder, type SseEvent, type SseRecord } from "./sse-decoder.js";
import { readStream } from "./stream-reading.js";

export type { BodyProblem, BodyProblemCode } from "./problem.js";
export type { SseDecoder, SseDecoderOptions, SseEvent, SseRecord } from "./sse-decoder.js";
export type { ContentCoding, ContentDecoder, ContentDecoderOptions } from "./content-decoding.js";
export type { BodyCollector, JsonParse } from "./json-body.js";
export { createSseDecoder } from "./sse-decoder.js";
export { createContentDecoder, guardedDecoderTap, parseContentEncoding, zstdSupported } from "./content-decoding.js";
export { collectBody, maxDepth, parseJsonBody, parseJsonText } from "./json-body.js";
export { BOMB_RATIO, charsetDoubt, charsetsOf, keepsAscii, readJsonBody, textReadings, type DecodedBytes, type JsonReading } from "./body-reading.js";
export { readStream, type StreamReading } from "./stream-reading.js";

export { DEFAULT_MAX_INSPECT_BYTES, DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_STREAM_BYTES } from "./limits.js";
import { DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_STREAM_BYTES } from "./limits.js";

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
  /** A JSON body's coding undone elsewhere (see JsonReadingOptions.decoded). */
  decoded?: Promise<DecodedBytes>;
  /**
   * What the bytes held to inspect this body are charged to (budget/inspect-budget.ts): a JSON body while it
   * is collected, an event until its blank line. Past what it grants, the body or event is not inspected
   * (an `over_budget` problem). None: nothing is charged.
   */
  charge?: ChargeFor;
  /** Also hand on SSE comments (`: ping`) as `sse_comment` messages. */
  includeComments?: boolean;
  onMessage(message: BodyMessage): void;
  onProblem(problem: BodyProblem): void;
}

export type BodyMessage =
  /**
   * `ambiguity`: why a receiver may read the body otherwise (then `value` is the lenient reading and
   * `alternates` the other readings that parse).
   */
  | { kind: "json"; value: unknown; bytes: number; alternates?: unknown[]; ambiguity?: string }
  | { kind: "sse"; event: SseEvent; ambiguity?: string }
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
  return mode === "sse" ? sseTap(options, emit, report) : jsonTap(options, emit, report);
}

/** A JSON body is kept whole (up to the inspection limit), then read every plausible way (see body-reading). */
function jsonTap(options: BodyDecoderOptions, emit: (message: BodyMessage) => void, report: (problem: BodyProblem) => void): BodyDecoderTap {
  const limit = options.maxInspectBytes;
  const collector = collectBody(limit, options.charge?.());
  let finished = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const read = (): void | Promise<void> => {
    if (collector.truncated) {
      return report({ code: "body_truncated", message: `JSON body is larger than the inspection limit of ${limit} bytes; not parsed` });
    }
    if (collector.overBudget) return report({ code: "over_budget", message: overBudgetMessage(`JSON body of ${collector.totalBytes} bytes`) });
    const reading = readJsonBody(collector.body(), {
      contentType: options.contentType,
      contentEncoding: options.contentEncoding,
      maxBytes: limit,
      maxJsonDepth: options.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH,
      ...(options.decoded ? { decoded: options.decoded } : {}),
    });
    return reading instanceof Promise ? reading.then(deliver) : deliver(reading);
  };
  const deliver = (reading: JsonReading): void => {
    const ambiguity = reading.ambiguity !== null ? { ambiguity: reading.ambiguity } : {};
    // Read whole but not JSON: its size is known (a body cut at the limit has none to give).
    const size = reading.ok || reading.problem.code === "body_truncated" ? {} : { bytes: collector.totalBytes };
    if (!reading.ok) return report({ ...reading.problem, ...ambiguity, ...size });
    emit({ kind: "json", value: reading.value, bytes: reading.bytes, ...(reading.alternates.length > 0 ? { alternates: reading.alternates } : {}), ...ambiguity });
  };
  // A body cut off by the connection is not JSON worth parsing.
  const finish = (aborted: boolean): void => {
    if (finished) return;
    finished = true;
    collector.end();
    const failed = (error: unknown): void => report({ code: "decoder_failed", message: describeError(error) });
    const settled = (): void => {
      collector.release();
      resolveDone();
    };
    try {
      const pending = aborted ? undefined : read();
      if (pending) return void pending.catch(failed).finally(settled);
    } catch (error) {
      failed(error);
    }
    settled();
  };
  return { mode: "json", done, data: (chunk) => !finished && collector.data(chunk), end: () => finish(false), abort: () => finish(true) };
}

/**
 * An event stream is decoded as it arrives: its content coding undone (or, when the proxy cannot, read as
 * sent: see stream-reading), then split into events.
 */
function sseTap(options: BodyDecoderOptions, emit: (message: BodyMessage) => void, report: (problem: BodyProblem) => void): BodyDecoderTap {
  let streamDoubt: string | null = null;
  const sse = createSseDecoder({
    maxEventBytes: options.maxEventBytes,
    ...(options.charge ? { charge: options.charge() } : {}),
    includeComments: options.includeComments ?? false,
    onRecord: (record: SseRecord) => {
      switch (record.type) {
        case "event": {
          const doubts = [streamDoubt, record.event.invalidUtf8 ? "the event is not valid UTF-8" : null, duplicateMemberDoubt(record.event.data)].filter((d) => d !== null);
          return emit({ kind: "sse", event: record.event, ...(doubts.length > 0 ? { ambiguity: doubts.join("; ") } : {}) });
        }
        case "comment":
          return emit({ kind: "sse_comment", comment: record.comment });
        case "meta": {
          const { type: _type, ...meta } = record;
          return emit({ kind: "sse_meta", ...meta });
        }
        case "incomplete":
          return report({
            code: "sse_incomplete_event",
            message: `stream ended mid-event (${record.bytes} bytes from byte ${record.byteOffset}, no blank line)${record.uninspected ? uninspectedTail(record.uninspected) : ""}`,
          });
        case "problem":
          return report({ code: record.code, message: record.message });
      }
    },
  });
  const reading = readStream({
    contentEncoding: options.contentEncoding,
    maxBytes: options.maxStreamBytes ?? DEFAULT_MAX_STREAM_BYTES,
    retainBytes: options.maxEventBytes,
    onData: (chunk) => sse.data(chunk),
    onProblem: report,
    onDoubt: (reason) => (streamDoubt = reason),
    // An aborted stream also ends: whatever was mid-event is reported as incomplete.
    onEnd: () => sse.end(),
  });
  const guarded = (action: () => void): void => {
    try {
      action();
    } catch (error) {
      report({ code: "decoder_failed", message: describeError(error) });
      reading.abort();
    }
  };
  return {
    mode: "sse",
    done: reading.done,
    data: (chunk) => guarded(() => reading.data(chunk)),
    end: () => guarded(() => reading.end()),
    abort: () => guarded(() => reading.abort()),
  };
}

/** What a long unterminated block was read for (src/body/sse-long-tail.ts); its id is not repeated and its event name is masked (either may carry a credential). */
function uninspectedTail(fields: { event?: string; id?: string; retry?: number }): string {
  const read = [
    fields.retry !== undefined ? `retry: ${fields.retry} ms (the client's reconnection delay is now that)` : null,
    fields.event !== undefined ? `event: ${JSON.stringify(redactText(fields.event.slice(0, 80)))}` : null,
    fields.id !== undefined ? "an id line" : null,
  ].filter((part) => part !== null);
  return `; its data was not inspected (over 64 KiB), only its field lines: ${read.length > 0 ? read.join(", ") : "none a client acts on"}`;
}

function ignoredTap(): BodyDecoderTap {
  return { mode: "ignored", done: Promise.resolve(), data() {}, end() {}, abort() {} };
}
