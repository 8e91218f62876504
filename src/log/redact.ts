import type { IncomingHttpHeaders } from "node:http";

/**
 * Secrets never reach a log: credentials in headers, OAuth token requests and responses, query
 * strings and free text are replaced by REDACTED before anything is written.
 * What stays visible on purpose: the Authorization scheme ("Bearer [redacted]"), `Mcp-Session-Id`
 * and `sessionId` query parameters (needed for correlation), `progressToken` (links progress to
 * its request) and JSON members named `code` (JSON-RPC error codes).
 */

export const REDACTED = "[redacted]";

/**
 * Compared after lower-casing and dropping `-` and `_`, so `access_token`, `accessToken` and
 * `Access-Token` all match. Deliberately no suffix rule: `progressToken` must stay visible.
 */
const SECRET_MEMBER_NAMES: ReadonlySet<string> = new Set([
  "accesstoken",
  "refreshtoken",
  "idtoken",
  "subjecttoken",
  "actortoken",
  "clientsecret",
  "codeverifier",
  "clientassertion",
  "assertion",
  "password",
  "passwd",
  "apikey",
  "xapikey",
  "privatekey",
  "secret",
  "token",
]);

/**
 * In query strings and form bodies `code` is an OAuth authorization code and `key` an API key
 * (`?key=` is common); in JSON bodies these names mean other things and stay visible.
 */
const SECRET_PARAM_NAMES: ReadonlySet<string> = new Set([...SECRET_MEMBER_NAMES, "code", "key"]);

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, "");
}

export function isSecretMemberName(name: string): boolean {
  return SECRET_MEMBER_NAMES.has(normalizeName(name));
}

function isSecretParamName(name: string): boolean {
  return SECRET_PARAM_NAMES.has(normalizeName(name));
}

// ---------------------------------------------------------------- headers

const AUTHORIZATION_HEADERS: ReadonlySet<string> = new Set(["authorization", "proxy-authorization"]);
const SECRET_HEADERS: ReadonlySet<string> = new Set([
  "cookie",
  "set-cookie",
  "cookie2",
  "set-cookie2",
  "api-key",
  "apikey",
  "x-api-key",
  "token",
  "secret",
]);
const SECRET_HEADER_PATTERN = /api-?key$|(?:^|-)token(?:-|$)|-auth|(?:^|-)secret|-password|-credential/;
/** Challenges name a scheme and where to get a token, never a credential. */
const CHALLENGE_HEADERS: ReadonlySet<string> = new Set(["www-authenticate", "proxy-authenticate"]);
const URL_HEADERS: ReadonlySet<string> = new Set(["location", "content-location", "referer"]);

/** An RFC 9110 auth-scheme token followed by credentials. */
const AUTH_SCHEME = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+\S/;

function redactAuthorization(value: string): string {
  const scheme = AUTH_SCHEME.exec(value.trim())?.[1];
  return scheme === undefined ? REDACTED : `${scheme} ${REDACTED}`;
}

function isSecretHeader(name: string): boolean {
  if (CHALLENGE_HEADERS.has(name)) return false;
  return SECRET_HEADERS.has(name) || SECRET_HEADER_PATTERN.test(name);
}

type HeaderValue = string | string[] | number | undefined;

/** Copy of the headers with credentials replaced; names keep their case and are matched case-insensitively. */
export function redactHeaders(
  headers: IncomingHttpHeaders | Record<string, HeaderValue>,
): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, raw] of Object.entries(headers as Record<string, HeaderValue>)) {
    if (raw === undefined) continue;
    const lower = name.toLowerCase();
    let redactOne: (value: string) => string;
    if (AUTHORIZATION_HEADERS.has(lower)) redactOne = redactAuthorization;
    else if (isSecretHeader(lower)) redactOne = () => REDACTED;
    else if (URL_HEADERS.has(lower)) redactOne = redactUrlQuery;
    else redactOne = (value) => value;
    const value = Array.isArray(raw) ? raw.map((item) => redactOne(String(item))) : redactOne(String(raw));
    defineMember(result, name, value);
  }
  return result;
}

// ---------------------------------------------------------------- JSON bodies

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Plain assignment of "__proto__" would change the prototype instead of adding a member. */
function defineMember(target: object, name: string, value: unknown): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}

type CopyTask =
  | { source: unknown; target: Record<string, unknown> | unknown[]; key: string | number }
  | { leave: object };

/**
 * Deep copy of a decoded JSON body in which string members with secret names (access_token,
 * client_secret, password, token, ...) read REDACTED. Iterative, so any nesting depth is safe;
 * the input is not modified. Cycles become "[circular]"; objects that are not plain (Date,
 * Buffer, ...) are kept as they are.
 */
export function redactBody(value: unknown): unknown {
  const root: unknown[] = [undefined];
  const ancestors = new Set<object>();
  const stack: CopyTask[] = [{ source: value, target: root, key: 0 }];
  for (let task = stack.pop(); task !== undefined; task = stack.pop()) {
    if ("leave" in task) {
      ancestors.delete(task.leave);
      continue;
    }
    const { source, target, key } = task;
    const place = (copy: unknown) =>
      typeof key === "number" ? ((target as unknown[])[key] = copy) : defineMember(target, key, copy);
    if (typeof source !== "object" || source === null || !(Array.isArray(source) || isPlainObject(source))) {
      place(source);
      continue;
    }
    if (ancestors.has(source)) {
      place("[circular]");
      continue;
    }
    ancestors.add(source);
    stack.push({ leave: source });
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array<unknown>(source.length);
      place(copy);
      for (let index = source.length - 1; index >= 0; index--) {
        stack.push({ source: source[index], target: copy, key: index });
      }
      continue;
    }
    const copy: Record<string, unknown> = {};
    place(copy);
    const names = Object.keys(source);
    for (const name of names) defineMember(copy, name, undefined); // keeps member order
    for (let index = names.length - 1; index >= 0; index--) {
      const name = names[index] as string;
      const member = source[name];
      if (typeof member === "string" && isSecretMemberName(name)) defineMember(copy, name, REDACTED);
      else stack.push({ source: member, target: copy, key: name });
    }
  }
  return root[0];
}

// ---------------------------------------------------------------- URLs and forms

function decodeParamName(raw: string): string {
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

// ---------------------------------------------------------------- free text

/**
 * `Bearer <token>` / `Basic <base64>`. Challenge parameters (`Bearer realm="..."`,
 * `Bearer error="invalid_token"`) are not credentials and stay readable.
 */
const AUTH_CREDENTIALS =
  /\b(Bearer|Basic)\s+(?!(?:realm|error|error_description|error_uri|scope|resource_metadata|charset)\s*=)[A-Za-z0-9\-._~+/]+=*/gi;
/** Base64url of `{"` starts every JWT header, hence `eyJ`; JWE has five parts. */
const JWT = /\beyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){2,4}/g;
const QUERY_PAIR = /\b([A-Za-z][\w-]*)=([^\s&"'#<>]+)/g;
const JSON_PAIR = /"([A-Za-z][\w-]*)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g;

/** Free text (error messages, URLs in them, quoted bodies) with credentials, JWTs and secret pairs hidden. */
export function redactText(text: string): string {
  return text
    .replace(AUTH_CREDENTIALS, (_match, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(JWT, REDACTED)
    .replace(QUERY_PAIR, (match, name: string) => (isSecretMemberName(name) ? `${name}=${REDACTED}` : match))
    .replace(JSON_PAIR, (match, name: string, colon: string) =>
      isSecretMemberName(name) ? `"${name}"${colon}"${REDACTED}"` : match,
    );
}

// ---------------------------------------------------------------- known values

/**
 * Shortest credential removed by value: shorter ones (a cookie `theme=dark`) would also hit ordinary text.
 * Real tokens, keys and session cookies are far longer.
 */
export const MIN_SCRUBBED_CHARS = 8;

/**
 * The credential values a request carried in its headers: Authorization / Proxy-Authorization credentials
 * (without the scheme), cookie values, and the values of API-key and token headers. Servers echo them in
 * free text (`WWW-Authenticate: Bearer error_description="token 8xZ… expired"`, error pages) where no
 * pattern can recognise them; `scrubValues` removes them by value. Longest first.
 */
export function headerCredentials(headers: IncomingHttpHeaders | Record<string, HeaderValue>): string[] {
  const found = new Set<string>();
  const add = (value: string | undefined): void => {
    const v = value?.trim();
    if (v !== undefined && v.length >= MIN_SCRUBBED_CHARS) found.add(v);
  };
  for (const [name, raw] of Object.entries(headers as Record<string, HeaderValue>)) {
    if (raw === undefined) continue;
    const lower = name.toLowerCase();
    for (const item of (Array.isArray(raw) ? raw : [raw]).map(String)) {
      if (AUTHORIZATION_HEADERS.has(lower)) {
        const credentials = /^\S+\s+(.+)$/.exec(item.trim())?.[1];
        add(credentials ?? item);
        if (credentials && /^basic$/i.test(item.trim().split(/\s+/)[0] ?? "")) {
          // Basic: the password inside the base64 as well.
          const decoded = Buffer.from(credentials, "base64").toString("utf8");
          const colon = decoded.indexOf(":");
          if (colon >= 0) add(decoded.slice(colon + 1));
        }
      } else if (lower === "cookie" || lower === "cookie2") {
        for (const pair of item.split(";")) add(pair.slice(pair.indexOf("=") + 1));
      } else if (isSecretHeader(lower) && !lower.startsWith("set-cookie")) {
        add(item);
      }
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
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

/**
 * Replaces the values at the given JSON Pointers (RFC 6901) of a copy made by `redactBody` with
 * `"[redacted: <what>]"`: secrets a detector found inside free-form payloads (a key pasted into a tool
 * argument) never reach the log either. Pointers that do not resolve are skipped.
 */
export function maskAtPointers(value: unknown, masks: readonly { pointer: string; what: string }[]): unknown {
  for (const { pointer, what } of masks) {
    if (pointer === "") return `[redacted: ${what}]`;
    const segments = pointer.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    let parent: unknown = value;
    for (const segment of segments.slice(0, -1)) {
      parent = typeof parent === "object" && parent !== null ? (parent as Record<string, unknown>)[segment] : undefined;
    }
    const last = segments.at(-1)!;
    if (typeof parent === "object" && parent !== null && typeof (parent as Record<string, unknown>)[last] === "string") {
      (parent as Record<string, unknown>)[last] = `[redacted: ${what}]`;
    }
  }
  return value;
}
