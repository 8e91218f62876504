import { isSecretMemberName, REDACTED } from "./names.js";

/**
 * `Bearer <token>` / `Basic <base64>`. Challenge parameters (`Bearer realm="..."`,
 * `Bearer error="invalid_token"`) are not credentials and stay readable.
 */
const AUTH_CREDENTIALS =
  /\b(Bearer|Basic)\s+(?!(?:realm|error|error_description|error_uri|scope|resource_metadata|charset)\s*=)[A-Za-z0-9\-._~+/]+=*/gi;
/** Base64url of `{"` starts every JWT header, hence `eyJ`; JWE has five parts. */
const JWT = /\beyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){2,4}/g;
const QUERY_PAIR = /\b([A-Za-z][\w-]*)=([^\s&"'#<>]+)/g;
/** `v=1;api_key=…`: the pairs a server splitting on `;` reads inside what one splitting on `&` takes for a value. */
const SEMICOLON_PAIR = /;([A-Za-z][\w-]*)=([^;]*)/g;
const JSON_PAIR = /"([A-Za-z][\w-]*)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g;

/** Free text (error messages, URLs in them, quoted bodies) with credentials, JWTs and secret pairs hidden. */
export function redactText(text: string): string {
  return text
    .replace(AUTH_CREDENTIALS, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(QUERY_PAIR, (match, name: string, value: string) =>
      isSecretMemberName(name) ? `${name}=${REDACTED}` : value.includes(";") ? `${name}=${value.replace(SEMICOLON_PAIR, redactPair)}` : match,
    )
    .replace(JSON_PAIR, (match, name: string, colon: string) =>
      isSecretMemberName(name) ? `"${name}"${colon}"${REDACTED}"` : match,
    );
}

function redactPair(pair: string, name: string): string {
  return isSecretMemberName(name) ? `;${name}=${REDACTED}` : pair;
}
