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

function redactParams(text: string): string {
  return text
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=");
      if (equals < 0) return pair;
      const rawName = pair.slice(0, equals);
      return isSecretParamName(decodeParamName(rawName)) ? `${rawName}=${REDACTED}` : pair;
    })
    .join("&");
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
    base +
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
  const start = pathWithQuery.search(/[?#]/);
  if (start < 0) return [];
  for (const pair of pathWithQuery.slice(start + 1).split(/[&#]/)) {
    const equals = pair.indexOf("=");
    if (equals < 0 || !isSecretParamName(decodeParamName(pair.slice(0, equals)))) continue;
    const raw = pair.slice(equals + 1);
    for (const value of [raw, decodeParamName(raw)]) if (value.length >= MIN_SCRUBBED_CHARS) found.add(value);
  }
  return [...found];
}
