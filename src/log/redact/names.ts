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

export function isSecretParamName(name: string): boolean {
  return SECRET_PARAM_NAMES.has(normalizeName(name));
}
