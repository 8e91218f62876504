import { redactText, redactUrlQuery } from "../../log/redact.js";
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

/** Free text with credentials hidden, then capped (redaction first: a cut JWT would no longer match). */
export function text(value: string): string {
  const clean = redactText(value);
  return clean.length > MAX_STRING_CHARS ? `${clean.slice(0, MAX_STRING_CHARS)}…` : clean;
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

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
