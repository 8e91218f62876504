import { redactText, redactUrlQuery } from "../../log/redact.js";
import { defineMember } from "../../log/redact/members.js";
import { maskShapedText } from "../../log/shaped-secrets.js";
import { headerValue } from "../../proxy/headers.js";

/** Longest string copied from the wire into a record; longer ones end in "…". */
const MAX_STRING_CHARS = 512;
/** Most entries copied from an array (scopes_supported, redirect_uris, ...). */
const MAX_ARRAY_ITEMS = 32;

/** Authorization schemes named in records; anything else is "other" (the header is never copied). */
const KNOWN_SCHEMES: ReadonlyMap<string, string> = new Map(
  ["Bearer", "Basic", "DPoP", "Digest", "Negotiate", "NTLM", "AWS4-HMAC-SHA256", "HOBA", "Mutual", "Token"].map((s) => [s.toLowerCase(), s]),
);

/** The scheme of an Authorization header, from a fixed list ("other" otherwise); null without one. */
export function authorizationScheme(header: string | string[] | undefined): string | null {
  const value = headerValue(header);
  if (value === undefined) return null;
  const match = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s+\S/.exec(value.trim());
  return (match && KNOWN_SCHEMES.get(match[1]!.toLowerCase())) ?? "other";
}

/** Free text with credentials hidden; capped by `capTexts` once the record is complete. */
export function text(value: string): string {
  return redactText(value);
}

/**
 * The record's strings capped at MAX_STRING_CHARS, after the exchange's credentials were removed by value:
 * a cut inside a credential would leave most of it, matching neither its value nor its shape. A long
 * string holding a secret by shape reads `[redacted: <type>]`, as the record guard would write it whole.
 */
export function capTexts(value: unknown, depth = 0): unknown {
  if (typeof value === "string") {
    if (value.length <= MAX_STRING_CHARS) return value;
    const masked = maskShapedText(value);
    return masked !== value ? masked : `${value.slice(0, MAX_STRING_CHARS)}…`;
  }
  if (typeof value !== "object" || value === null || depth > 8) return value;
  if (Array.isArray(value)) return value.map((item) => capTexts(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) defineMember(out, name, capTexts(member, depth + 1));
  return out;
}

export function url(value: string): string {
  return text(redactUrlQuery(value));
}

export function clientId(value: string): string {
  return /^https?:\/\//i.test(value) ? url(value) : text(value);
}

export function first(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

export function copyString(out: Record<string, unknown>, name: string, value: unknown, clean: (v: string) => string): void {
  if (typeof value === "string") out[name] = clean(value);
}

export function stringList(value: unknown, clean: (v: string) => string): string[] | undefined {
  if (typeof value === "string") return [clean(value)];
  if (!Array.isArray(value)) return undefined;
  return value
    .filter((item): item is string => typeof item === "string")
    .slice(0, MAX_ARRAY_ITEMS)
    .map(clean);
}

