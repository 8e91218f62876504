import type { IncomingHttpHeaders } from "node:http";
import { createContentDecoder, guardedDecoderTap } from "../../body/index.js";
import type { BodyTap } from "../../body/body-tap.js";

export type BodyProblemName = "truncated" | "aborted" | "invalid_json" | "not_json" | "decode_error" | "unsupported_encoding" | "decoder_failed";

export interface CapturedBody {
  text: string;
  /** The body was longer than the bound: `text` is its prefix. */
  truncated: boolean;
  /** Why the body could not be read completely (truncated is reported separately). */
  problem: BodyProblemName | null;
}

export interface Capture {
  tap: BodyTap;
  done: Promise<void>;
  result(): CapturedBody;
}

/** Keeps the first `limit` decoded bytes of a body (content-encoding undone); never throws. */
export function capture(headers: IncomingHttpHeaders, limit: number): Capture {
  const chunks: Buffer[] = [];
  let truncated = false;
  let aborted = false;
  let problem: BodyProblemName | null = null;
  const result = (): CapturedBody => ({
    text: Buffer.concat(chunks).toString("utf8"),
    truncated,
    problem: problem ?? (aborted ? "aborted" : null),
  });
  const created = createContentDecoder(headers["content-encoding"], {
    maxBytes: limit,
    onData: (chunk) => chunks.push(chunk),
    onProblem: (p) => {
      if (p.code === "decode_limit") truncated = true;
      else problem ??= p.code === "unsupported_encoding" || p.code === "decode_error" ? p.code : "decoder_failed";
    },
  });
  if (!created.ok) {
    problem = "unsupported_encoding";
    return { tap: { data() {}, end() {} }, done: Promise.resolve(), result };
  }
  const decoder = created.decoder;
  const tap = guardedDecoderTap(
    decoder,
    () => (problem ??= "decoder_failed"),
    () => (aborted = true),
  );
  return { tap, done: decoder.done, result };
}
