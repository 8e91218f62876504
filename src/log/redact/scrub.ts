import { defineMember, isPlainObject } from "./members.js";
import { REDACTED } from "./names.js";

/**
 * Shortest credential removed by value: shorter ones (a cookie `theme=dark`) would also hit ordinary text.
 * Real tokens, keys and session cookies are far longer.
 */
export const MIN_SCRUBBED_CHARS = 8;

/** Secrets in the order `scrubValues` wants them: longest first, so one that contains another is removed whole. */
export function longestFirst(secrets: Iterable<string>): string[] {
  return [...secrets].sort((a, b) => b.length - a.length);
}

/** Deep copy of a record in which every occurrence of the given values, in any string, reads REDACTED. */
export function scrubValues<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const scrub = (v: unknown): unknown => {
    if (typeof v === "string") {
      let out = v;
      for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
      return out;
    }
    if (Array.isArray(v)) return v.map(scrub);
    if (isPlainObject(v)) {
      const copy: Record<string, unknown> = {};
      for (const [k, member] of Object.entries(v)) defineMember(copy, k, scrub(member));
      return copy;
    }
    return v;
  };
  return scrub(value) as T;
}
