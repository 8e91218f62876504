import { createContentDecoder, parseContentEncoding } from "./content-decoding.js";
import { BOMB_RATIO } from "./body-reading.js";
import { GrowingBuffer } from "../budget/growing-buffer.js";
import type { BodyProblem } from "./problem.js";

export interface StreamReadingOptions {
  contentEncoding: string | readonly string[] | undefined;
  /** Cap on the decoded bytes of a compressed stream (decompression-bomb guard). */
  maxBytes: number;
  /** Bytes kept while a coding has produced nothing yet, to be read as sent should it fail to decode. */
  retainBytes: number;
  /** The bytes a receiver reads, in order. */
  onData(chunk: Buffer): void;
  onProblem(problem: BodyProblem): void;
  /** Called before the first byte read a way the receiver might not (an unknown or broken coding). */
  onDoubt(reason: string): void;
  /** Called once, after the last `onData`. */
  onEnd(): void;
}

export interface StreamReading {
  data(chunk: Buffer): void;
  end(): void;
  abort(): void;
  /** Settles when `onEnd` has run. */
  readonly done: Promise<void>;
}

/**
 * Undoes a stream's content coding the way a lenient receiver does: a coding the proxy does not know, or one
 * that fails before its first decoded byte (plain text labelled gzip), is read as sent. A stream that breaks
 * after decoded bytes stops there (a problem).
 */
export function readStream(opts: StreamReadingOptions): StreamReading {
  const label = typeof opts.contentEncoding === "string" ? opts.contentEncoding : (opts.contentEncoding ?? []).join(", ");
  let ended = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const finish = (): void => {
    if (ended) return;
    ended = true;
    try {
      opts.onEnd();
    } finally {
      resolveDone();
    }
  };
  const asSent = (): StreamReading => ({ data: (chunk) => !ended && opts.onData(chunk), end: finish, abort: finish, done });

  const parsed = parseContentEncoding(opts.contentEncoding);
  if (parsed.ok && parsed.codings.length === 0) return asSent();
  let raw = false;
  let inputEnded = false;
  let produced = false;
  // One growing buffer, not a Buffer per chunk (a stream may come a byte at a time).
  let retained: GrowingBuffer | null = new GrowingBuffer(undefined, opts.retainBytes);
  const created = parsed.ok
    ? createContentDecoder(opts.contentEncoding, {
        maxBytes: opts.maxBytes,
        maxRatio: BOMB_RATIO,
        onData: (chunk) => {
          produced = true;
          retained = null;
          opts.onData(chunk);
        },
        onProblem: (problem) => {
          if (problem.code === "decode_error" && !produced && retained !== null) {
            opts.onDoubt(`content-encoding "${label}" does not decode (${problem.message}); read as sent`);
            raw = true;
            const kept = retained.view();
            retained = null;
            if (kept.length > 0) opts.onData(kept);
          } else {
            opts.onProblem(problem);
          }
        },
        onEnd: () => {
          if (!raw || inputEnded) finish();
        },
      })
    : null;
  if (!created?.ok) {
    opts.onDoubt(`content-encoding "${label}" is not one the proxy can decode; read as sent`);
    return asSent();
  }
  const decoder = created.decoder;
  return {
    done,
    data(chunk) {
      if (ended || inputEnded) return;
      if (raw) return opts.onData(chunk);
      if (retained !== null && (retained.length + chunk.length > opts.retainBytes || !retained.append(chunk))) retained = null;
      decoder.data(chunk);
    },
    end() {
      if (inputEnded) return;
      inputEnded = true;
      if (raw) finish();
      else decoder.end();
    },
    abort() {
      inputEnded = true;
      decoder.abort();
      finish();
    },
  };
}
