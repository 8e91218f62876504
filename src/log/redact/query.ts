import { isSecretParamName, REDACTED } from "./names.js";
import { MIN_SCRUBBED_CHARS } from "./scrub.js";

/** A query or form parameter name or value as written, decoded (`+` is a space); as it is when malformed. */
export function decodeParamName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    return raw;
  }
}

/**
 * Servers split a query on `&`, and many on `;` as well (Rack, PHP's `arg_separator.input`,
 * `parse_qs(separator=";")`), or on `;` alone. A parameter starts after either, and the value of a secret one
 * is hidden to the next separator of the kind that opened it (`&` at the start): a value a client sent with
 * a raw `;` in it (`dsn=Server=x;Password=y`) is hidden whole, and so is what a `;` reader takes for one.
 * Hand-written: URLSearchParams and the `querystring` module read one separator.
 */
function secretValueRanges(text: string, depth = 0): [start: number, end: number][] {
  const ranges: [number, number][] = [];
  const next = (char: string, from: number): number => {
    const at = text.indexOf(char, from);
    return at < 0 ? text.length : at;
  };
  for (let start = 0; start <= text.length; ) {
    const separator = start === 0 ? "&" : text[start - 1]!;
    const paramEnd = Math.min(next("&", start), next(";", start));
    const nameEnd = Math.min(next("=", start), paramEnd);
    if (text[nameEnd] === "=") {
      const from = nameEnd + 1;
      if (isSecretParamName(decodeParamName(text.slice(start, nameEnd)))) ranges.push([from, next(separator, from)]);
      else if (holdsSecretQuery(text.slice(from, paramEnd), depth)) ranges.push([from, paramEnd]);
    }
    start = paramEnd + 1;
  }
  return ranges;
}

/** Levels of URLs inside URLs read (`?return_to=%2Fcb%3Fcode%3D…`, encoded again at each level). */
const MAX_NESTED_URLS = 3;

/**
 * An ordinary parameter's value that is itself a query or URL with a credential in it, percent-encoded
 * (`return_to=%2Fcb%3Fcode%3D…`) or after a second `?` (`x=1?code=…`): hidden whole. Each level decodes once.
 */
function holdsSecretQuery(raw: string, depth: number): boolean {
  if (depth >= MAX_NESTED_URLS) return false;
  if (raw.includes("=")) {
    const query = raw.search(/[?#]/);
    const inner = query < 0 ? raw : raw.slice(query + 1);
    if (inner.split("#").some((part) => secretValueRanges(part, depth + 1).length > 0)) return true;
  }
  if (!/%(?:25)*3d/i.test(raw)) return false;
  const decoded = decodeParamName(raw);
  return decoded !== raw && holdsSecretQuery(decoded, depth + 1);
}

function redactParams(text: string): string {
  let out = "";
  let kept = 0;
  for (const [start, end] of secretValueRanges(text)) {
    if (end <= kept) continue;
    out += start >= kept ? `${text.slice(kept, start)}${REDACTED}` : "";
    kept = end;
  }
  return kept === 0 ? text : out + text.slice(kept);
}

/** A path parameter (`/mcp;api_key=…`: servlet path parameters, JAX-RS matrix parameters). */
const PATH_PARAM = /;([^;/=]*)=([^;/]*)/g;

function redactPathParams(path: string): string {
  return path.replace(PATH_PARAM, (pair, rawName: string) => (isSecretParamName(decodeParamName(rawName)) ? `;${rawName}=${REDACTED}` : pair));
}

/** Text quoting a URL (a setting, in an error message) with the URL's `user:password@` hidden. */
export function redactUserinfo(text: string): string {
  return text.replace(/\/\/[^/?#\s@]*@/g, `//${REDACTED}@`);
}

/** `application/x-www-form-urlencoded` body (OAuth token requests) with secret parameters redacted. */
export function redactFormBody(text: string): string {
  return redactParams(text);
}

/**
 * A path or URL with secret query (and fragment, where the implicit flow puts `access_token`)
 * parameters redacted. Everything else, `sessionId` included, is kept byte for byte.
 */
export function redactUrlQuery(pathWithQuery: string): string {
  const hash = pathWithQuery.indexOf("#");
  const beforeHash = hash < 0 ? pathWithQuery : pathWithQuery.slice(0, hash);
  const fragment = hash < 0 ? undefined : pathWithQuery.slice(hash + 1);
  const question = beforeHash.indexOf("?");
  const base = question < 0 ? beforeHash : beforeHash.slice(0, question);
  const query = question < 0 ? undefined : beforeHash.slice(question + 1);
  return (
    redactPathParams(base) +
    (query === undefined ? "" : `?${redactParams(query)}`) +
    (fragment === undefined ? "" : `#${redactParams(fragment)}`)
  );
}

/**
 * The values of the secret query and fragment parameters of a path, as sent and percent-decoded (a server
 * may echo either), from MIN_SCRUBBED_CHARS: removed by value from the exchange's other records.
 */
export function queryCredentials(pathWithQuery: string): string[] {
  const found = new Set<string>();
  const split = pathWithQuery.search(/[?#]/);
  const path = split < 0 ? pathWithQuery : pathWithQuery.slice(0, split);
  const values = [...path.matchAll(PATH_PARAM)].filter(([, name]) => isSecretParamName(decodeParamName(name!))).map(([, , value]) => value!);
  if (split >= 0) {
    for (const part of pathWithQuery.slice(split + 1).split("#")) {
      // As hidden, and as a reader splitting on both separators reads it (a server may echo either).
      for (const [start, end] of secretValueRanges(part)) values.push(part.slice(start, end), part.slice(start, end).split(/[&;]/)[0]!);
    }
  }
  for (const raw of values) for (const value of [raw, decodeParamName(raw)]) if (value.length >= MIN_SCRUBBED_CHARS) found.add(value);
  return [...found];
}
