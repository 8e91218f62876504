import type { DecodedBody } from "../../proxy/decoded-body.js";

export type BodyProblemName = "truncated" | "aborted" | "invalid_json" | "not_json" | "decode_error" | "unsupported_encoding" | "decoder_failed";

export interface CapturedBody {
  text: string;
  /** The body was longer than the bound: `text` is its prefix. */
  truncated: boolean;
  /** Why the body could not be read completely (truncated is reported separately). */
  problem: BodyProblemName | null;
}

export interface Capture {
  done: Promise<void>;
  result(): CapturedBody;
}

/** Keeps the first `limit` decoded bytes of a body (its decoded-body source undoes the coding); never throws. */
export function capture(body: DecodedBody, limit: number): Capture {
  const chunks: Buffer[] = [];
  let truncated = false;
  let aborted = false;
  let problem: BodyProblemName | null = null;
  const result = (): CapturedBody => ({
    text: Buffer.concat(chunks).toString("utf8"),
    truncated,
    problem: problem ?? (aborted ? "aborted" : null),
  });
  let settle!: () => void;
  const done = new Promise<void>((resolve) => (settle = resolve));
  body.subscribe({
    limit,
    data: (chunk) => chunks.push(chunk),
    end: (outcome) => {
      const p = outcome.problem;
      if (p?.code === "decode_limit") truncated = true;
      else if (p) problem = p.code === "unsupported_encoding" || p.code === "decode_error" ? p.code : "decoder_failed";
      aborted = outcome.aborted;
      settle();
    },
  });
  return { done, result };
}
