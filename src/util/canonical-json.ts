import { nodeCrypto } from "./lazy-crypto.js";

/**
 * Deterministic JSON in the spirit of RFC 8785 (JCS): object members sorted by the UTF-16 code
 * units of their names, no whitespace, numbers and strings printed as JSON.stringify prints them
 * (which is what JCS prescribes for finite numbers). Members whose value is undefined, a function
 * or a symbol are dropped and become null in arrays, and `toJSON` is honoured, as in JSON.stringify.
 * Two JSON values that differ only in member order give the same text, hence the same hash.
 */

/**
 * Deeper values are refused rather than risk the call stack: no real tool arguments come close,
 * and a hostile 100,000-deep payload must not take the proxy down.
 */
export const MAX_CANONICAL_DEPTH = 1000;

export type CanonicalJsonFailure = "too_deep" | "cycle" | "not_serializable";

export class CanonicalJsonError extends Error {
  override readonly name = "CanonicalJsonError";
  constructor(
    readonly reason: CanonicalJsonFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Throws CanonicalJsonError when the value is too deep, cyclic, a bigint, or not JSON at all (undefined). */
export function canonicalJson(value: unknown): string {
  const text = serialize(value, "", 0, new Set());
  if (text === undefined) {
    throw new CanonicalJsonError("not_serializable", `${typeof value} has no JSON form`);
  }
  return text;
}

function serialize(value: unknown, key: string, depth: number, ancestors: Set<object>): string | undefined {
  if (hasToJSON(value)) value = value.toJSON(key);
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
      return JSON.stringify(value);
    case "bigint":
      throw new CanonicalJsonError("not_serializable", "bigint has no JSON form");
    case "object":
      break;
    default:
      return undefined; // undefined, function, symbol
  }
  if (value === null) return "null";
  if (depth >= MAX_CANONICAL_DEPTH) {
    throw new CanonicalJsonError("too_deep", `nesting deeper than ${MAX_CANONICAL_DEPTH}`);
  }
  if (ancestors.has(value)) throw new CanonicalJsonError("cycle", "value contains a cycle");
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      const items = value.map((item, index) => serialize(item, String(index), depth + 1, ancestors) ?? "null");
      return `[${items.join(",")}]`;
    }
    const unboxed = unboxPrimitive(value);
    if (unboxed !== undefined) return JSON.stringify(unboxed);
    const record = value as Record<string, unknown>;
    const members: string[] = [];
    // Default sort compares UTF-16 code units, exactly what JCS asks for.
    for (const name of Object.keys(record).sort()) {
      const text = serialize(record[name], name, depth + 1, ancestors);
      if (text !== undefined) members.push(`${JSON.stringify(name)}:${text}`);
    }
    return `{${members.join(",")}}`;
  } finally {
    ancestors.delete(value);
  }
}

function hasToJSON(value: unknown): value is { toJSON(key: string): unknown } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  );
}

function unboxPrimitive(value: object): string | number | boolean | undefined {
  if (value instanceof String || value instanceof Number || value instanceof Boolean) {
    return value.valueOf();
  }
  return undefined;
}

/** `"sha256:<hex>"`; strings are hashed as UTF-8. */
export function sha256Of(text: string | Buffer): string {
  return `sha256:${nodeCrypto().hash("sha256", text, "hex")}`;
}

export type ArgsHashResult = { hash: string } | { hash: null; reason: string };

/** Hash of the canonical JSON of tool arguments, or why there is none; never throws. */
export function computeArgsHash(args: unknown): ArgsHashResult {
  try {
    return { hash: sha256Of(canonicalJson(args)) };
  } catch (error) {
    // A throwing toJSON or getter ends up here too: logging must go on without a hash.
    return { hash: null, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** Hash of the canonical JSON of tool arguments; null when they have none (too deep, cyclic, absent). */
export function argsHash(args: unknown): string | null {
  return computeArgsHash(args).hash;
}
