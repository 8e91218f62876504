import { isSecretMemberName, REDACTED } from "./names.js";

/**
 * `Bearer <token>` / `Basic <base64>`. Challenge parameters (`Bearer realm="..."`,
 * `Bearer error="invalid_token"`) are not credentials and stay readable.
 */
const AUTH_CREDENTIALS =
  /\b(Bearer|Basic)\s+(?!(?:realm|error|error_description|error_uri|scope|resource_metadata|charset)\s*=)[A-Za-z0-9\-._~+/]+=*/gi;
/**
 * Base64url of `{"` starts every JWT header, hence `eyJ`; JWE has five parts. Patterns over peer text start
 * only where a run of their characters starts (a look-behind), never inside one: a start at every word
 * boundary of `eyJ-eyJ-…` or `a-a-a-…` rescans the run to its end each time, quadratic in its length.
 */
const JWT = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){2,4}/g;
/** A run of name characters before `=`; the name is the run from its first letter (`9-api_key`: `api_key`). */
const QUERY_PAIR = /(?<![\w-])([\w-]+)=([^\s&"'#<>]+)/g;
/** `v=1;api_key=…`: the pairs a server splitting on `;` reads inside what one splitting on `&` takes for a value. */
const SEMICOLON_PAIR = /;([A-Za-z][\w-]*)=([^;]*)/g;
const JSON_PAIR = /"([A-Za-z][\w-]*)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g;

/** Free text (error messages, URLs in them, quoted bodies) with credentials, JWTs and secret pairs hidden. */
export function redactText(text: string): string {
  return text
    .replace(AUTH_CREDENTIALS, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(QUERY_PAIR, (match, run: string, value: string) => {
      const letter = run.search(/[A-Za-z]/);
      if (letter < 0) return match;
      if (isSecretMemberName(run.slice(letter))) return `${run}=${REDACTED}`;
      return value.includes(";") ? `${run}=${value.replace(SEMICOLON_PAIR, redactPair)}` : match;
    })
    .replace(JSON_PAIR, (match, name: string, colon: string) =>
      isSecretMemberName(name) ? `"${name}"${colon}"${REDACTED}"` : match,
    );
}

function redactPair(pair: string, name: string): string {
  return isSecretMemberName(name) ? `;${name}=${REDACTED}` : pair;
}
