/**
 * Something a body decoder could not do. Decoders report these instead of throwing: the body is
 * still forwarded untouched, only its inspection is affected.
 */
export interface BodyProblem {
  code: BodyProblemCode;
  message: string;
  /** A receiver may read the body otherwise than the proxy tried (see body-reading): why. */
  ambiguity?: string;
  /** Size of the body the problem is about, when the decoder read it whole (a JSON body). */
  bytes?: number;
}

export type BodyProblemCode =
  /** `Content-Encoding` names a coding we cannot decode: the body is not inspected. */
  | "unsupported_encoding"
  /** The compressed data is corrupt or truncated. */
  | "decode_error"
  /** Decoded output grew past the configured cap (decompression-bomb guard); decoding stopped. */
  | "decode_limit"
  /** One SSE event grew past `maxEventBytes`; it was dropped. */
  | "event_too_large"
  /** The event stream ended after part of an event (no terminating blank line). */
  | "sse_incomplete_event"
  /** A line of the event stream is not a valid SSE field (unknown field name, bad `retry`). */
  | "sse_invalid_field"
  | "empty_body"
  | "invalid_utf8"
  | "invalid_json"
  /** The JSON body is larger than the inspection limit: it was not parsed. */
  | "body_truncated"
  /** The inspection memory budget (or the peer's share of it) had no room for the body or event: not inspected. */
  | "over_budget"
  /** The parsed JSON nests deeper than allowed: it is not handed on, so nothing recurses into it. */
  | "json_too_deep"
  /** The JSON holds more values than MAX_JSON_VALUES (member names included): not parsed, so no pass over it holds the loop. */
  | "json_too_many_values"
  /** A bug or a throwing callback inside the decoder; caught so it never reaches the proxy. */
  | "decoder_failed";

export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
