import type { IncomingHttpHeaders } from "node:http";
import { defineMember } from "./members.js";
import { isSecretHeaderName, REDACTED } from "./names.js";
import { longestFirst, MIN_SCRUBBED_CHARS, MIN_SCRUBBED_COOKIE_CHARS } from "./scrub.js";
import { redactUrlQuery } from "./query.js";
import { redactText } from "./text.js";

const AUTHORIZATION_HEADERS: ReadonlySet<string> = new Set(["authorization", "proxy-authorization"]);
const URL_HEADERS: ReadonlySet<string> = new Set(["location", "content-location", "referer"]);

/** An RFC 9110 auth-scheme token followed by credentials. */
const AUTH_SCHEME = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+\S/;

function redactAuthorization(value: string): string {
  const scheme = AUTH_SCHEME.exec(value.trim())?.[1];
  return scheme === undefined ? REDACTED : `${scheme} ${REDACTED}`;
}

/** A run of characters that may be a URL: `<…>`, quotes and white space end it (a `Link`, a quoted `error_uri`). */
const URL_LIKE_RUN = /[^\s<>"'`]+/g;

/**
 * Any other header value with the secret parameters of every URL in it redacted (`Refresh: 0; url=…?code=…`,
 * `Link: <…?code=…>; rel=…`), and of bare `name=value` pairs (`X-Debug: access_token=…`); then read as free
 * text (a debug header quoting a token response as JSON, `… with Bearer …`). One greedy pass over runs that
 * cannot backtrack, then the linear text redaction.
 */
function redactUrlsIn(value: string): string {
  return redactText(value.includes("=") ? redactUrlRuns(value) : value);
}

function redactUrlRuns(value: string): string {
  return value.replace(URL_LIKE_RUN, (run) => {
    if (run.includes("?") || run.includes("#")) return redactUrlQuery(run);
    return run.includes("=") ? redactUrlQuery(`?${run}`).slice(1) : run;
  });
}
const hide = (): string => REDACTED;
/** Header names repeat from one exchange to the next: each is classified once. */
const redactors = new Map<string, (value: string) => string>();
const MAX_REMEMBERED_NAMES = 1_000;

function redactorFor(lower: string): (value: string) => string {
  let redactor = redactors.get(lower);
  if (redactor) return redactor;
  if (AUTHORIZATION_HEADERS.has(lower)) redactor = redactAuthorization;
  else if (isSecretHeaderName(lower)) redactor = hide;
  else if (URL_HEADERS.has(lower)) redactor = redactUrlQuery;
  else redactor = redactUrlsIn;
  if (redactors.size < MAX_REMEMBERED_NAMES) redactors.set(lower, redactor);
  return redactor;
}

type HeaderValue = string | string[] | number | undefined;
type HeaderMap = IncomingHttpHeaders | Record<string, HeaderValue>;

/** Copy of the headers with credentials replaced; names keep their case and are matched case-insensitively. */
export function redactHeaders(headers: HeaderMap): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, raw] of Object.entries(headers as Record<string, HeaderValue>)) {
    if (raw === undefined) continue;
    const redactOne = redactorFor(name.toLowerCase());
    const value = Array.isArray(raw) ? raw.map((item) => redactOne(String(item))) : redactOne(String(raw));
    defineMember(result, name, value);
  }
  return result;
}

/**
 * The credential values a request carried in its headers: Authorization / Proxy-Authorization credentials
 * (without the scheme), cookie values (from 8 characters), and the values of API-key and token headers. Servers echo them in
 * free text (`WWW-Authenticate: Bearer error_description="token 8xZ… expired"`, error pages) where no
 * pattern can recognise them; `scrubValues` removes them by value. Longest first.
 */
export function headerCredentials(headers: HeaderMap): string[] {
  const found = new Set<string>();
  const add = (value: string | undefined, min = MIN_SCRUBBED_CHARS): void => {
    const v = value?.trim();
    if (v !== undefined && v.length >= min) found.add(v);
  };
  for (const [name, raw] of Object.entries(headers as Record<string, HeaderValue>)) {
    if (raw === undefined) continue;
    const lower = name.toLowerCase();
    // Only headers whose values are hidden carry credentials.
    const redactor = redactorFor(lower);
    if (redactor !== redactAuthorization && redactor !== hide) continue;
    for (const item of (Array.isArray(raw) ? raw : [raw]).map(String)) {
      if (redactor === redactAuthorization) {
        const [, scheme, credentials] = /^(\S+)\s+(.+)$/.exec(item.trim()) ?? [];
        add(credentials ?? item);
        if (credentials && /^basic$/i.test(scheme ?? "")) {
          // Basic: the password inside the base64 as well.
          const decoded = Buffer.from(credentials, "base64").toString("utf8");
          const colon = decoded.indexOf(":");
          if (colon >= 0) add(decoded.slice(colon + 1));
        }
      } else if (lower === "cookie" || lower === "cookie2") {
        for (const pair of item.split(";")) add(pair.slice(pair.indexOf("=") + 1), MIN_SCRUBBED_COOKIE_CHARS);
      } else if (!lower.startsWith("set-cookie")) {
        add(item);
      }
    }
  }
  return longestFirst(found);
}
