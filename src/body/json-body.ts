import { isUtf8 } from "node:buffer";
import type { Charge } from "../budget/inspect-budget.js";
import { GrowingBuffer } from "../budget/growing-buffer.js";
import type { BodyTap } from "./body-tap.js";
import { moreJsonValuesThan } from "./json-structure.js";
import { MAX_JSON_VALUES } from "./limits.js";

export type JsonParseFailure = "empty_body" | "invalid_utf8" | "invalid_json" | "body_truncated" | "json_too_many_values";

export type JsonParse = { ok: true; value: unknown } | { ok: false; code: JsonParseFailure; error: string };

export interface JsonBodyOptions {
  /** The body was cut at the inspection limit: it is not parsed (a prefix of JSON is not JSON). */
  truncated?: boolean;
  /** The inspection limit, for the message. */
  limit?: number;
}

/** Parses a whole body as UTF-8 JSON. Never throws. */
export function parseJsonBody(body: Uint8Array, options: JsonBodyOptions = {}): JsonParse {
  if (options.truncated) {
    const limit = options.limit ?? body.length;
    return {
      ok: false,
      code: "body_truncated",
      error: `JSON body is larger than the inspection limit of ${limit} bytes; not parsed`,
    };
  }
  // Checked first, so a body with bad bytes is reported rather than parsed with U+FFFD in its strings.
  if (!isUtf8(body)) return { ok: false, code: "invalid_utf8", error: `JSON body is not valid UTF-8 (${body.length} bytes)` };
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  // A leading byte order mark is not part of the JSON text (as TextDecoder would drop it).
  return parseJsonText(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
}

/** Parses JSON text (an SSE event's `data`, say). Never throws. */
export function parseJsonText(text: string): JsonParse {
  if (text.trim() === "") return { ok: false, code: "empty_body", error: "empty body: no JSON to parse" };
  if (moreJsonValuesThan(text, MAX_JSON_VALUES)) {
    return { ok: false, code: "json_too_many_values", error: `JSON holds more than ${MAX_JSON_VALUES} values (member names included); not parsed, not inspected` };
  }
  try {
    // V8's JSON.parse is iterative: deep nesting cannot overflow the stack here (see maxDepth for later walks).
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, code: "invalid_json", error: describeJsonSyntaxError(error) };
  }
}

/**
 * V8 quotes the offending input in some messages (`Unexpected token 'x', "{"token": x..." is not valid
 * JSON`); bodies can hold secrets, so keep only the description and the position.
 */
function describeJsonSyntaxError(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  // The quoted excerpt, possibly led by "...", always comes last: cut from its opening quote.
  const withoutSource = raw.replace(/,?\s*(?:\.\.\.)?".*$/s, "");
  return `invalid JSON: ${withoutSource.slice(0, 160)}`;
}

/**
 * Nesting depth of a value (scalars 0, `[]` 1, `[[1]]` 2), walked without recursion. Stops early:
 * returns `limit + 1` as soon as the value is known to be deeper than `limit`. Cyclic values end too.
 */
export function maxDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.value === null || typeof item.value !== "object") continue;
    const depth = item.depth + 1;
    if (depth > limit) return limit + 1;
    if (depth > deepest) deepest = depth;
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value);
    for (const child of children) {
      if (child !== null && typeof child === "object") stack.push({ value: child, depth });
    }
  }
  return deepest;
}

/** A BodyTap that keeps the first `limit` bytes of a body and counts the rest. */
export interface BodyCollector extends BodyTap {
  readonly limit: number;
  /** Every byte seen, kept or not. */
  readonly totalBytes: number;
  /** More than `limit` bytes arrived; only the first `limit` are kept. */
  readonly truncated: boolean;
  /** The inspection budget refused room for the body: nothing of it is kept. */
  readonly overBudget: boolean;
  readonly ended: boolean;
  readonly aborted: boolean;
  /** The kept bytes (a view: valid until `release`). */
  body(): Buffer;
  /** Forgets the kept bytes and what they were charged. */
  release(): void;
}

/** `charge`: what the kept bytes are charged to (see budget/inspect-budget.ts); none, nothing is charged. */
export function collectBody(limit: number, charge?: Charge): BodyCollector {
  const kept = new GrowingBuffer(charge, limit);
  const state = { totalBytes: 0, ended: false, aborted: false, overBudget: false };
  return {
    limit,
    get totalBytes() {
      return state.totalBytes;
    },
    get truncated() {
      return state.totalBytes > limit;
    },
    get overBudget() {
      return state.overBudget;
    },
    get ended() {
      return state.ended;
    },
    get aborted() {
      return state.aborted;
    },
    data(chunk: Buffer) {
      if (state.ended || state.aborted) return;
      state.totalBytes += chunk.length;
      const room = limit - kept.length;
      if (room <= 0 || chunk.length === 0 || state.overBudget) return;
      if (!kept.append(chunk.length <= room ? chunk : chunk.subarray(0, room))) {
        state.overBudget = true;
        kept.clear();
      }
    },
    end() {
      state.ended = true;
    },
    abort() {
      state.aborted = true;
    },
    body() {
      return kept.view();
    },
    release() {
      kept.clear();
    },
  };
}
