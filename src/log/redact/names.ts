export const REDACTED = "[redacted]";

/**
 * Which names hold credentials, by the words they are made of: a name is split on `-`, `_`, `.`, spaces and
 * camelCase (`X-Amz-Security-Token` → x amz security token, `dbPassword` → db password, `APIKey` → api key).
 * The rules cover the credential names of the `sensitive-fields` list (npm, cabinjs) and the headers and
 * query parameters of the common cloud APIs, without its PII names (card numbers, SSNs: the pii detector's
 * business) and without `code`/`hash`, which in MCP mean other things. Hand-written rather than that list
 * as a dependency: a list of exact spellings misses `db_password` and would hide `progressToken`.
 */

/** A name containing one of these words holds a secret wherever the word stands (`db_password`, `secret_key`). */
const SECRET_WORDS: ReadonlySet<string> = new Set([
  "password", "passwd", "pwd", "pswd", "passphrase", "secret", "secrets", "credential", "credentials", "creds", "apikey",
  "connectionstring", "connstring", "connstr",
]);

/** The name's last word says what its value is: `auth_token`, `basic_auth`, `X-Amz-Signature`, `jwt`. */
const SECRET_HEADS: ReadonlySet<string> = new Set([
  "token", "auth", "authorization", "authentication", "jwt", "cookie", "session", "csrf", "xsrf", "otp", "totp",
  "assertion", "verifier", "privatekey", "pass", "pw", "passcode", "dsn",
]);

/** In a query, form or header these short names are credentials (`?appid=` OpenWeather, `sk`, GitHub's `pat`); in JSON other things. */
const PARAM_SECRET_HEADS: ReadonlySet<string> = new Set(["appid", "sk", "pat"]);

/** `connection_string`, `connStr`: a database URL with its password. */
const CONNECTION_STRING_HEADS: ReadonlySet<string> = new Set(["string", "str"]);
const CONNECTION_QUALIFIERS: ReadonlySet<string> = new Set(["connection", "conn"]);

/** A signature is a credential in a URL (`X-Amz-Signature`, `sig`); in JSON it is mostly code (`def f(x)`). */
const URL_SIGNATURE_HEADS: ReadonlySet<string> = new Set(["signature", "sig"]);

/** Tokens that are not credentials: `progressToken` (MCP), pagination tokens. */
const PLAIN_TOKEN_QUALIFIERS: ReadonlySet<string> = new Set([
  "progress", "page", "next", "continuation", "pagination", "cursor", "sync", "cancellation",
]);

/** Keys that are not credentials: database, cache and protocol keys. Any other `…_key` is one. */
const PLAIN_KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  "primary", "foreign", "sort", "partition", "hash", "range", "public", "cache", "object", "idempotency",
  "websocket", "row", "composite", "unique", "index", "lookup", "map", "group", "field", "column", "table",
  "translation", "message", "dedup", "deduplication", "shortcut", "hot",
]);

/** `code` alone is a JSON-RPC error code in JSON; these make it a one-time credential. */
const SECRET_CODE_QUALIFIERS: ReadonlySet<string> = new Set([
  "auth", "authorization", "oauth", "device", "otp", "totp", "mfa", "2fa", "security", "verification", "recovery", "backup", "access",
]);

/**
 * Names of OAuth extensions whose words alone do not say they hold a credential: OpenID4VCI's pre-authorized
 * code and transaction code, CIBA's authentication request id. Matched by their words, in any spelling.
 */
const OAUTH_CREDENTIAL_NAMES: ReadonlySet<string> = new Set(["pre authorized code", "tx code", "auth req id"]);

/** Run-together spellings (`accesstoken`, `xapikey`, `hapikey`) are split before these endings. */
const RUN_TOGETHER_ENDINGS = ["apikey", "token", "secret", "password", "passwd", "passphrase", "credentials", "credential"];

/** `authkey`, `secretkey`: split before `key` only after these (a `monkey` is no key). */
const RUN_TOGETHER_KEY_QUALIFIERS: ReadonlySet<string> = new Set([
  "auth", "access", "secret", "master", "signing", "encryption", "license", "subscription", "private", "priv", "app", "client",
]);

/** Trailing words that name a container, not what is in it (form fields of `sensitive-fields`). */
const CONTAINER_WORDS: ReadonlySet<string> = new Set(["field", "input", "value"]);

const isDigit = (code: number): boolean => code >= 48 && code <= 57;
const isNumber = (word: string): boolean => /^[0-9]+$/.test(word);

/** `password1` → `password`; a number stays itself. A loop: `/\d+$/` is quadratic on long digit runs. */
function withoutTrailingDigits(word: string): string {
  let end = word.length;
  while (end > 0 && isDigit(word.charCodeAt(end - 1))) end--;
  return end === 0 ? word : word.slice(0, end);
}

const WORD_BOUNDARY = /(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[^A-Za-z0-9]+/;

export function nameWords(name: string): string[] {
  // Zero-width look-arounds keep the split linear in the name's length (names come from peers).
  const words = name
    .split(WORD_BOUNDARY)
    .filter(Boolean)
    .map((w) => w.toLowerCase())
    .map(withoutTrailingDigits);
  const split: string[] = [];
  for (const word of words) {
    const ending = RUN_TOGETHER_ENDINGS.find((e) => word.length > e.length && word.endsWith(e));
    if (ending) split.push(word.slice(0, -ending.length), ending);
    else if (word.endsWith("key") && RUN_TOGETHER_KEY_QUALIFIERS.has(word.slice(0, -3))) split.push(word.slice(0, -3), "key");
    else split.push(word);
  }
  // `api_key_2`, `access_token_field`, `secret_value`: what the value is comes before these.
  while (split.length > 1 && (isNumber(split.at(-1)!) || CONTAINER_WORDS.has(split.at(-1)!))) split.pop();
  return split;
}

type Context = "json" | "param";

function classify(name: string, context: Context): boolean {
  const words = nameWords(name);
  if (words.length === 0) return false;
  if (words.some((w) => SECRET_WORDS.has(w)) || OAUTH_CREDENTIAL_NAMES.has(words.join(" "))) return true;
  const head = words.at(-1)!;
  const qualifiers = words.slice(0, -1);
  if (head === "token") return !qualifiers.some((q) => PLAIN_TOKEN_QUALIFIERS.has(q));
  if (SECRET_HEADS.has(head)) return true;
  if (CONNECTION_STRING_HEADS.has(head) && qualifiers.some((q) => CONNECTION_QUALIFIERS.has(q))) return true;
  if (URL_SIGNATURE_HEADS.has(head) || PARAM_SECRET_HEADS.has(head)) return context === "param";
  // `key` and `code` alone: an API key and an OAuth code in a query or form, other things in JSON.
  if (head === "key") return qualifiers.length === 0 ? context === "param" : !qualifiers.some((q) => PLAIN_KEY_QUALIFIERS.has(q));
  if (head === "code") return qualifiers.length === 0 ? context === "param" : qualifiers.some((q) => SECRET_CODE_QUALIFIERS.has(q));
  return false;
}

/** Names repeat from one message to the next: each is classified once (the cache starts over when full). */
const MAX_REMEMBERED = 4_096;
const MAX_REMEMBERED_LENGTH = 64;
const remembered: Record<Context, Map<string, boolean>> = { json: new Map(), param: new Map() };

function isSecretName(name: string, context: Context): boolean {
  const cache = remembered[context];
  let secret = cache.get(name);
  if (secret === undefined) {
    secret = classify(name, context);
    if (name.length > MAX_REMEMBERED_LENGTH) return secret;
    if (cache.size >= MAX_REMEMBERED) cache.clear();
    cache.set(name, secret);
  }
  return secret;
}

/** A JSON member name whose string value is a credential. */
export function isSecretMemberName(name: string): boolean {
  return isSecretName(name, "json");
}

/** A query, fragment or form parameter whose value is a credential (`key` and `code` too). */
export function isSecretParamName(name: string): boolean {
  return isSecretName(name, "param");
}

/** Header words that hide a value wherever they stand: headers are metadata, hiding one too many costs little. */
const HEADER_WORDS: ReadonlySet<string> = new Set([
  ...SECRET_WORDS, ...SECRET_HEADS, ...URL_SIGNATURE_HEADS, "key", "token", "dpop",
]);

/** Headers that carry those words and no credential. */
const VISIBLE_HEADERS: ReadonlySet<string> = new Set([
  "mcp-session-id", "www-authenticate", "proxy-authenticate", "authentication-info", "proxy-authentication-info",
  "sec-websocket-key", "sec-websocket-accept", "idempotency-key", "signature-input", "accept-signature",
]);

/** A header (lower-cased name) whose whole value is a credential. */
export function isSecretHeaderName(lower: string): boolean {
  if (VISIBLE_HEADERS.has(lower)) return false;
  return nameWords(lower).some((w) => HEADER_WORDS.has(w)) || isSecretParamName(lower);
}
