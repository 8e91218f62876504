import type { IncomingHttpHeaders } from "node:http";
import { mediaTypeOf, parseJsonText } from "../../body/index.js";
import { decodeParamName, isSecretParamName, MIN_SCRUBBED_CHARS, redactBody } from "../../log/redact.js";
import { ownString } from "../../util/own-string.js";
import type { CapturedBody } from "./capture.js";
import { isPlainObject } from "../../util/plain-object.js";

/**
 * The credentials a body carried, in every spelling a server may write them back in (as sent, decoded,
 * percent-encoded, form-encoded), from MIN_SCRUBBED_CHARS: removed by value from every record of the
 * exchange (a token endpoint quoting the refresh token in `WWW-Authenticate`, a `Location` carrying the code).
 * A form's secret parameters (`refresh_token`, `code`, `client_secret`, `device_code`, …), a JSON body's
 * members with secret names at any depth, and a JSON token request's parameters as in a form.
 */
export function bodyCredentials(body: CapturedBody, headers: IncomingHttpHeaders): string[] {
  const found = new Set<string>();
  const media = mediaTypeOf(headers["content-type"]);
  if (media === "application/x-www-form-urlencoded") {
    // A cut-off form still names its parameters: the ones it holds whole are read.
    for (const pair of body.text.split("&")) {
      const equals = pair.indexOf("=");
      if (equals < 0) continue;
      const raw = pair.slice(equals + 1);
      if (isSecretParamName(decodeParamName(pair.slice(0, equals)))) addSpellings(found, decodeParamName(raw), raw);
    }
    return [...found];
  }
  // A response's JSON is read whatever its type says (token endpoints answer `text/plain` too).
  if (body.truncated || body.problem || !/^\s*[[{]/.test(body.text)) return [];
  const parsed = parseJsonText(body.text);
  if (!parsed.ok) return [];
  const hidden = new Set<string>();
  redactBody(parsed.value, hidden);
  for (const value of hidden) addSpellings(found, value);
  if (isPlainObject(parsed.value) && typeof parsed.value.grant_type === "string") {
    for (const [name, value] of Object.entries(parsed.value)) if (typeof value === "string" && isSecretParamName(name)) addSpellings(found, value);
  }
  return [...found];
}

function addSpellings(found: Set<string>, value: string, asSent?: string): void {
  if (value.length < MIN_SCRUBBED_CHARS) return;
  const spellings = [value, asSent, encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2)];
  // Kept for the exchange's later records: copies, not views of the body's text.
  for (const spelling of spellings) if (spelling !== undefined && spelling.length >= MIN_SCRUBBED_CHARS) found.add(ownString(spelling));
}
