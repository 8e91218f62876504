/**
 * Which names hold credentials. The positive tables cover the credential names of the `sensitive-fields`
 * list (npm) in its spellings, the names reported missing (issue: db_password, Ocp-Apim-Subscription-Key,
 * X-Amz-Signature, …) and the common cloud APIs; the negative tables are the names that must stay readable.
 */
import { describe, expect, it } from "vitest";
import { isSecretHeaderName, isSecretMemberName, isSecretParamName } from "../../src/log/redact/names.js";
import { redactBody, redactHeaders, redactUrlQuery, REDACTED } from "../../src/log/redact.js";

const SECRET_MEMBERS = [
  // reported
  "db_password", "api_token", "auth_token", "secret_key", "passphrase", "pwd",
  // sensitive-fields (credential part), in its spellings
  "access_token", "accessToken", "accesstoken", "ACCESSTOKEN", "Access token", "api_key", "apiKey", "apikey", "APIKEY",
  "apiToken", "apitoken", "authToken", "authtoken", "confirm_password", "confirmPasswd", "credentials", "Credentials",
  "creds", "mysql_pwd", "mysqlPwd", "new_password", "oldPassword", "passwd", "passwd_confirm", "password", "Password1",
  "password2", "repeatPassword", "secret", "SECRET", "stripe_token", "stripeToken", "token", "TOKEN", "otp", "otp_token",
  "totp_code", "two_factor_token", "2fa_code", "security_token", "securityCode", "_csrf", "csrf", "input_api_key",
  "access_token_field",
  // OAuth and cloud names
  "refresh_token", "id_token", "client_secret", "code_verifier", "client_assertion", "private_key", "privateKey",
  "x-api-key", "X-API-KEY", "XAPIKey", "aws_secret_access_key", "secretAccessKey", "session_token", "sessionToken",
  "authorization", "Authorization", "bearer_token", "jwt", "cookie", "session", "device_code",
  "authorization_code", "encryption_key", "signingKey", "license_key", "subscriptionKey", "functions_key",
  "basic_auth", "x_auth", "client_credentials", "dbPassword", "passwordHash", "smtp_pass_phrase_secret",
  // OAuth extensions: OpenID4VCI, CIBA
  "pre-authorized_code", "preAuthorizedCode", "tx_code", "txCode", "auth_req_id", "authReqId",
  // issue 23: short and run-together credential names
  "hapikey", "authkey", "authKey", "accesskey", "secretkey", "masterkey", "privkey", "appkey", "xapikey", "pass", "db_pass",
  "pw", "user_pw", "pswd", "passcode", "dsn", "sentry_dsn", "connection_string", "connectionString", "ConnectionString",
  "conn_str", "connstr",
];

const PLAIN_MEMBERS = [
  "max_tokens", "maxTokens", "input_tokens", "tokens", "tokenizer", "tokenizer_name", "author", "authors", "author_name",
  "keyboard", "keyboard_layout", "monkey", "turkey", "progressToken", "progress_token", "nextPageToken", "page_token",
  "nextToken", "cursor", "nextCursor", "sessionId", "session_id", "token_type", "tokenType", "token_count", "token_endpoint",
  "token_endpoint_auth_method", "authorization_endpoint", "authorization_servers", "code", "error_code", "status_code",
  "country_code", "key", "keyId", "key_name", "primary_key", "primaryKey", "public_key", "publicKey", "sort_key",
  "idempotency_key", "cache_key", "name", "description", "message", "text", "uri", "mimeType", "oauth", "user_code",
  "client_id", "clientId", "grant_type", "scope", "state", "redirect_uri", "expires_in", "signature_method",
  "signatureAlgorithm", "session_timeout", "cookie_policy", "passwordless", "secretary",
  // A code tool's function signature; signatures are credentials in URLs and headers only.
  "signature", "sig",
  // Credentials in a query only: an app id, a DynamoDB sort key, a pattern.
  "appid", "sk", "pat", "pass_through", "passthrough", "bypass", "compass", "string", "connection", "connection_id",
];

const SECRET_PARAMS = [
  "X-Amz-Security-Token", "X-Amz-Signature", "X-Amz-Credential", "sig", "jwt", "code", "key", "access_token",
  "api_key", "api%5Fkey", "apiKey", "token", "signature", "password", "client_secret", "id_token", "auth", "sv_sig",
  "pre-authorized_code", "tx_code", "auth_req_id", "device_code", "subject_token", "actor_token", "assertion",
  "hapikey", "appid", "pass", "pw", "pat", "sk", "dsn", "connection_string", "authkey",
];
const PLAIN_PARAMS = [
  "sessionId", "session_id", "token_type", "state", "client_id", "redirect_uri", "X-Amz-Date", "X-Amz-Expires",
  "X-Amz-SignedHeaders", "X-Amz-Algorithm", "response_type", "scope", "max_tokens", "page", "cursor", "q", "author",
];

const SECRET_HEADERS = [
  "ocp-apim-subscription-key", "x-functions-key", "x-access-key", "password", "authentication", "x-amz-security-token",
  "x-goog-api-key", "api-key", "apikey", "x-api-key", "token", "secret", "x-auth-token", "x-auth", "x-csrf-token",
  "x-xsrf-token", "cookie", "cookie2", "set-cookie", "set-cookie2", "x-session-token", "x-api-secret", "signature",
  "dpop", "x-client-secret-value", "x-authorization", "private-token", "x-vault-token", "x-registry-auth",
  "x-db-password", "x-credentials", "key",
];
const PLAIN_HEADERS = [
  "mcp-session-id", "www-authenticate", "proxy-authenticate", "authentication-info", "sec-websocket-key",
  "idempotency-key", "content-type", "accept", "user-agent", "x-request-id", "mcp-protocol-version", "last-event-id",
  "x-ratelimit-remaining", "keep-alive", "content-length", "x-forwarded-for", "x-author", "x-max-tokens",
  "x-amz-date", "x-amz-content-sha256", "signature-input", "x-keyboard-layout",
];

describe("secret names", () => {
  it.each(SECRET_MEMBERS)("JSON member %s is a secret", (name) => expect(isSecretMemberName(name)).toBe(true));
  it.each(PLAIN_MEMBERS)("JSON member %s stays readable", (name) => expect(isSecretMemberName(name)).toBe(false));
  it.each(SECRET_PARAMS)("query parameter %s is a secret", (name) => {
    expect(redactUrlQuery(`/p?${name}=v4lue-canary&x=1`)).toBe(`/p?${name}=${REDACTED}&x=1`);
  });
  it.each(PLAIN_PARAMS)("query parameter %s stays readable", (name) => {
    expect(isSecretParamName(name)).toBe(false);
    expect(redactUrlQuery(`/p?${name}=v4lue`)).toBe(`/p?${name}=v4lue`);
  });
  it.each(SECRET_HEADERS)("header %s is hidden", (name) => {
    expect(isSecretHeaderName(name)).toBe(true);
    const mixedCase = name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
    expect(redactHeaders({ [mixedCase]: "v4lue-canary" })[mixedCase]).toBe(REDACTED);
  });
  it.each(PLAIN_HEADERS)("header %s stays readable", (name) => {
    expect(isSecretHeaderName(name)).toBe(false);
    expect(redactHeaders({ [name]: "v4lue" })[name]).toBe("v4lue");
  });

  it("redacts the reported JSON members at any depth, strings only", () => {
    const body = { config: { db_password: "p1-canary", api_token: "t1-canary", auth_token: "t2-canary", secret_key: "k1-canary", passphrase: "pp-canary", pwd: "pw-canary", max_tokens: 100, tokenizer: "cl100k" } };
    const out = JSON.stringify(redactBody(body));
    expect(out).not.toContain("canary");
    expect(out).toContain('"max_tokens":100');
    expect(out).toContain('"tokenizer":"cl100k"');
  });

  it("classifies hostile names in linear time", () => {
    const started = performance.now();
    for (const name of ["A".repeat(200_000), `a${"1".repeat(200_000)}b`, `${"aA".repeat(100_000)}token`, "-_".repeat(100_000)]) {
      isSecretMemberName(name);
      isSecretParamName(name);
      isSecretHeaderName(name.toLowerCase());
    }
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
