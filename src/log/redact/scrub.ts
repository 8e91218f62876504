import { defineMember, isPlainObject } from "./members.js";
import { REDACTED } from "./names.js";
import { withMaskedNames } from "../mask-by-shape.js";

/**
 * Shortest credential removed by value (as the OAuth scrubber does): shorter ones would also hit ordinary
 * text. Real tokens, keys and passwords are longer.
 */
export const MIN_SCRUBBED_CHARS = 6;
/** Cookies also carry preferences (`theme=dark`): their values are removed from 8 characters. */
export const MIN_SCRUBBED_COOKIE_CHARS = 8;

/** Secrets in the order `scrubValues` wants them: longest first, so one that contains another is removed whole. */
export function longestFirst(secrets: Iterable<string>): string[] {
  return [...new Set(secrets)].sort((a, b) => b.length - a.length);
}

/**
 * Record members that say what a message was (which method and tool, which server, which session, what the
 * policy decided): a peer that sends `Authorization: Bearer tools/call` must not erase them from its own
 * records. Credentials do not belong there; payloads, headers, paths and error texts are scrubbed.
 */
export const IDENTITY_MEMBERS: ReadonlySet<string> = new Set([
  "level", "time", "event", "flow", "tunnel", "phase", "mode", "transport", "server", "client", "session",
  "protocolVersion", "direction", "kind", "id", "method", "tool", "related", "decision", "argsHash", "progressToken",
  "batch", "step",
]);

function scrubString(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** Every occurrence of the values, in any string at any depth; unchanged parts are shared, not copied. */
function scrubDeep(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return scrubString(value, secrets);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const clean = scrubDeep(item, secrets);
      if (clean !== item) (copy ??= value.slice())[i] = clean;
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | null = null;
  const names = Object.keys(value);
  for (const name of names) {
    const member = value[name];
    const clean = scrubDeep(member, secrets);
    if (clean === member) continue;
    if (copy === null) {
      copy = {};
      for (const k of names) defineMember(copy, k, value[k]);
    }
    defineMember(copy, name, clean);
  }
  // A member name is peer text too (a result keyed by the client's token): renamed, numbered when two clash.
  const renamed = names.map((name) => scrubString(name, secrets));
  if (renamed.every((name, i) => name === names[i])) return copy ?? value;
  return withMaskedNames(names, renamed, copy ?? value);
}

/**
 * A record in which every occurrence of the given values reads REDACTED, in every member but the ones that
 * identify the message. The input is not modified; when nothing matches, it is returned as it is.
 */
export function scrubValues<T>(record: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return record;
  const scrubbed = (name: string): boolean => !isPlainObject(record) || !IDENTITY_MEMBERS.has(name);
  // The record's text is searched once for each value, and only the values it holds are tried on each of its
  // strings: trying every value on every string costs values × strings (a payload of many short strings).
  const parts: string[] = [];
  collectStrings(record, parts, scrubbed);
  const text = parts.join("\u0000");
  const present = secrets.filter((secret) => text.includes(secret));
  if (present.length === 0) return record;
  if (!isPlainObject(record)) return scrubDeep(record, present) as T;
  let copy: Record<string, unknown> | null = null;
  for (const [name, member] of Object.entries(record)) {
    if (IDENTITY_MEMBERS.has(name)) continue;
    const clean = scrubDeep(member, present);
    if (clean !== member) defineMember((copy ??= { ...record }), name, clean);
  }
  return (copy ?? record) as T;
}

/** Every string at any depth (the record's own members filtered by `keep`), for one search of all of them. */
function collectStrings(value: unknown, parts: string[], keep: (name: string) => boolean = () => true): void {
  if (typeof value === "string") parts.push(value);
  else if (Array.isArray(value)) for (const item of value) collectStrings(item, parts);
  else if (isPlainObject(value)) {
    for (const name of Object.keys(value)) {
      if (!keep(name)) continue;
      parts.push(name);
      collectStrings(value[name], parts);
    }
  }
}
