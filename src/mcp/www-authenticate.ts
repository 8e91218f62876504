/**
 * `WWW-Authenticate` parsing (RFC 9110 §11.6.1): a comma-separated list of challenges, each an
 * auth-scheme followed by either a token68 or a comma-separated list of `name=value` auth-params whose
 * values are tokens or quoted-strings (with `\` escapes). Lenient where servers are sloppy; never throws.
 */

export interface AuthChallenge {
  /** As sent, e.g. "Bearer" (compare case-insensitively). */
  scheme: string;
  /** Auth-params, names lower-cased; the first of a repeated name wins. */
  params: Map<string, string>;
  /** The challenge carried a token68 instead of auth-params. */
  token68: boolean;
}

/** Longest header value looked at; the rest is ignored. */
const MAX_HEADER_CHARS = 16 * 1024;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Parses one or more `WWW-Authenticate` header values (node joins repeated headers with ", "). */
export function parseWwwAuthenticate(header: string | readonly string[] | undefined): AuthChallenge[] {
  if (header === undefined) return [];
  const value = (typeof header === "string" ? header : header.join(", ")).slice(0, MAX_HEADER_CHARS);
  const challenges: AuthChallenge[] = [];
  let current: AuthChallenge | undefined;
  for (const item of splitTopLevel(value)) {
    const text = item.trim();
    if (text === "") continue;
    const name = TOKEN.exec(text)?.[0];
    if (name === undefined) continue; // junk: skip the item
    const rest = text.slice(name.length);
    const afterName = rest.trimStart();
    if (afterName.startsWith("=")) {
      // `name = value`: an auth-param of the current challenge.
      if (current) addParam(current, name, afterName.slice(1));
      continue;
    }
    // A new challenge: the scheme, then (after whitespace) a token68 or its first auth-param.
    current = { scheme: name, params: new Map(), token68: false };
    challenges.push(current);
    if (afterName === "" || rest === afterName) continue; // no whitespace after the scheme: nothing more to read
    if (TOKEN68.test(afterName) && !/^[^=]+=[^=]/.test(afterName)) {
      current.token68 = true;
      continue;
    }
    const paramName = TOKEN.exec(afterName)?.[0];
    if (paramName === undefined) continue;
    const paramRest = afterName.slice(paramName.length).trimStart();
    if (paramRest.startsWith("=")) addParam(current, paramName, paramRest.slice(1));
  }
  return challenges;
}

/** The first challenge with this scheme (case-insensitive). */
export function findChallenge(challenges: readonly AuthChallenge[], scheme: string): AuthChallenge | undefined {
  const wanted = scheme.toLowerCase();
  return challenges.find((c) => c.scheme.toLowerCase() === wanted);
}

function addParam(challenge: AuthChallenge, rawName: string, rawValue: string): void {
  const name = rawName.toLowerCase();
  if (challenge.params.has(name)) return;
  challenge.params.set(name, parseValue(rawValue.trim()));
}

/** A quoted-string (unescaped; an unterminated one runs to the end) or a token (taken as it is). */
function parseValue(text: string): string {
  if (!text.startsWith('"')) return text.trim();
  let out = "";
  for (let i = 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && i + 1 < text.length) {
      out += text[++i];
      continue;
    }
    if (c === '"') break;
    out += c;
  }
  return out;
}

/** Splits at commas that are not inside a quoted-string. */
function splitTopLevel(value: string): string[] {
  const items: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
    } else if (c === ",") {
      items.push(value.slice(start, i));
      start = i + 1;
    }
  }
  items.push(value.slice(start));
  return items;
}
