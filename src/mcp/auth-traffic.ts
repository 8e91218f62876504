import type { IncomingHttpHeaders } from "node:http";
import { createContentDecoder, guardedDecoderTap, mediaTypeOf, parseJsonText } from "../body/index.js";
import type { Logger } from "../log/logger.js";
import { headerCredentials, isSecretMemberName, MIN_SCRUBBED_CHARS, redactText, redactUrlQuery, scrubValues } from "../log/redact.js";
import type { Addon, BodyTap, Exchange } from "../proxy/exchange.js";
import { formatTarget } from "../proxy/target.js";
import { findChallenge, parseWwwAuthenticate, type AuthChallenge } from "./www-authenticate.js";

/**
 * OAuth traffic around MCP servers (authorization spec 2025-06-18 on) as `event: "auth"` records: the
 * 401/403 challenge, metadata discovery, dynamic client registration and token requests. One record per
 * auth-related exchange, written when it ends. Records say what was asked and answered, never a token or
 * secret: credentials appear only as booleans ("a client_secret was sent"), and every string taken from
 * the wire goes through the redaction functions. The contract is in docs/log-format.md.
 */

export interface AuthTrafficOptions {
  /** Largest (decoded) body inspected, each way; a larger one is recorded as `truncated: true`. */
  maxBodyBytes?: number;
}

export const DEFAULT_AUTH_MAX_BODY_BYTES = 64 * 1024;

export type AuthStep = "challenge" | "discovery" | "token" | "registration";
export type DiscoveryDocument = "oauth-protected-resource" | "oauth-authorization-server" | "openid-configuration";

/** Longest string copied from the wire into a record; longer ones end in "…". */
const MAX_STRING_CHARS = 512;
/** Most entries copied from an array (scopes_supported, redirect_uris, ...). */
const MAX_ARRAY_ITEMS = 32;

const WELL_KNOWN = /(?:^|\/)\.well-known\/(oauth-protected-resource|oauth-authorization-server|openid-configuration)(?:\/|$)/;

const NOTE = "auth";
/** Longest wait at shutdown for records whose bodies are still being decoded. */
const CLOSE_GRACE_MS = 1_000;

/** Headers only an MCP request carries: such a POST is JSON-RPC, not OAuth. */
const MCP_HINTS = ["mcp-session-id", "mcp-protocol-version", "mcp-method"] as const;

/** Authorization schemes named in records; anything else is "other" (the header is never copied). */
const KNOWN_SCHEMES: ReadonlyMap<string, string> = new Map(
  ["Bearer", "Basic", "DPoP", "Digest", "Negotiate", "NTLM", "AWS4-HMAC-SHA256", "HOBA", "Mutual", "Token"].map((s) => [s.toLowerCase(), s]),
);

type BodyProblemName = "truncated" | "aborted" | "invalid_json" | "not_json" | "decode_error" | "unsupported_encoding" | "decoder_failed";

interface CapturedBody {
  text: string;
  /** The body was longer than the bound: `text` is its prefix. */
  truncated: boolean;
  /** Why the body could not be read completely (truncated is reported separately). */
  problem: BodyProblemName | null;
}

interface Capture {
  tap: BodyTap;
  done: Promise<void>;
  result(): CapturedBody;
}

/** What the addon knows about one exchange. */
class AuthFlow {
  document: DiscoveryDocument | undefined;
  request: Capture | undefined;
  response: Capture | undefined;
  challenge: Record<string, string> | undefined;
  constructor(readonly ex: Exchange) {}
}

/** The `auth` addon: register it with the others in `startProxy`. */
export function authTrafficAddon(log: Logger, opts: AuthTrafficOptions = {}): Addon {
  const limit = opts.maxBodyBytes ?? DEFAULT_AUTH_MAX_BODY_BYTES;
  const pending = new Set<Promise<void>>();
  const existing = (ex: Exchange) => ex.notes.get(NOTE) as AuthFlow | undefined;
  const flowOf = (ex: Exchange): AuthFlow => {
    let flow = existing(ex);
    if (!flow) {
      flow = new AuthFlow(ex);
      ex.notes.set(NOTE, flow);
    }
    return flow;
  };

  return {
    name: "auth",
    requestHeaders(ex) {
      const { method, headers } = ex.request;
      const document = method === "GET" ? discoveryDocument(ex.request.path) : undefined;
      if (document) flowOf(ex).document = document;
      if (method === "POST" && mayCarryOAuthBody(headers)) {
        const flow = flowOf(ex);
        flow.request = capture(headers, limit);
        ex.tapRequest(flow.request.tap);
      }
    },

    responseHeaders(ex) {
      const response = ex.response;
      if (!response) return;
      const challenge = challengeOf(response.status, response.headers);
      if (challenge) flowOf(ex).challenge = challenge;
      const flow = existing(ex);
      if (flow && (flow.document || flow.request)) {
        flow.response = capture(response.headers, limit);
        ex.tapResponse(flow.response.tap);
      }
    },

    exchangeEnd(ex) {
      const flow = existing(ex);
      if (!flow) return;
      const decoding = [flow.request?.done, flow.response?.done].filter((p): p is Promise<void> => p !== undefined);
      const written = Promise.allSettled(decoding).then(() => {
        try {
          const record = authRecord(flow);
          if (record) log[record.level](record.fields);
        } catch (err) {
          // Never let a record-building bug escape; say which, without any of the data.
          log.error({ event: "addon_error", addon: "auth", hook: "exchangeEnd", err: err instanceof Error ? err.name : "error" });
        }
      });
      pending.add(written);
      void written.finally(() => pending.delete(written));
    },

    /** At shutdown: records still being built (bodies still decoding) are written before `stop`. */
    async close() {
      // Bounded: a body that never ends must not hold up the shutdown.
      const grace = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
      await Promise.race([Promise.allSettled([...pending]), grace]);
    },
  };
}

// ---------------------------------------------------------------- classification

/** `/.well-known/oauth-protected-resource[/path]` and friends (also `/issuer/.well-known/openid-configuration`). */
export function discoveryDocument(pathWithQuery: string): DiscoveryDocument | undefined {
  const path = pathWithQuery.split(/[?#]/, 1)[0] ?? "";
  return WELL_KNOWN.exec(path)?.[1] as DiscoveryDocument | undefined;
}

function mayCarryOAuthBody(headers: IncomingHttpHeaders): boolean {
  if (MCP_HINTS.some((name) => headers[name] !== undefined)) return false;
  const media = mediaTypeOf(headers["content-type"]);
  return media === "application/x-www-form-urlencoded" || media === "application/json" || (media?.endsWith("+json") ?? false);
}

/** A Bearer challenge on a 401, or on a 403 that asks for more scope. */
function challengeOf(status: number, headers: IncomingHttpHeaders): Record<string, string> | undefined {
  if (status !== 401 && status !== 403) return undefined;
  const header = headers["www-authenticate"];
  if (header === undefined) return undefined;
  const bearer = findChallenge(parseWwwAuthenticate(header), "Bearer");
  if (!bearer) return undefined;
  if (status === 403 && bearer.params.get("error") !== "insufficient_scope") return undefined;
  return describeChallenge(bearer);
}

function describeChallenge(c: AuthChallenge): Record<string, string> {
  const out: Record<string, string> = { scheme: c.scheme };
  const realm = c.params.get("realm");
  if (realm !== undefined) out.realm = text(realm);
  const metadata = c.params.get("resource_metadata");
  if (metadata !== undefined) out.resource_metadata = url(metadata);
  const scope = c.params.get("scope");
  if (scope !== undefined) out.scope = text(scope);
  const error = c.params.get("error");
  if (error !== undefined) out.error = text(error);
  const description = c.params.get("error_description");
  if (description !== undefined) out.error_description = text(description);
  return out;
}

// ---------------------------------------------------------------- the record

interface BuiltRecord {
  level: "info" | "warn";
  fields: Record<string, unknown>;
}

function authRecord(flow: AuthFlow): BuiltRecord | undefined {
  const ex = flow.ex;
  const requestBody = flow.request?.result();
  const responseBody = flow.response?.result();
  const requestValue = requestBody ? parseRequestBody(requestBody, ex.request.headers) : undefined;
  const responseJson = responseBody ? parseResponseBody(responseBody) : undefined;

  let step: AuthStep;
  const details: Record<string, unknown> = {};
  const json = mediaTypeOf(ex.request.headers["content-type"]) !== "application/x-www-form-urlencoded";
  if (requestValue && typeof first(requestValue.grant_type) === "string") {
    step = "token";
    details.request = tokenRequest(requestValue, ex.request.headers);
    if (ex.response) details.response = tokenResponse(responseJson?.value);
  } else if (requestValue && json && Array.isArray(requestValue.redirect_uris)) {
    step = "registration";
    details.request = registrationRequest(requestValue);
    if (ex.response) details.response = registrationResponse(responseJson?.value);
  } else if (flow.document) {
    step = "discovery";
    details.document = flow.document;
    const metadata = discoveryMetadata(responseJson?.value);
    if (metadata) details.metadata = metadata;
  } else if (flow.challenge) {
    step = "challenge";
  } else {
    return undefined;
  }

  const fields: Record<string, unknown> = {
    event: "auth",
    step,
    flow: ex.id,
    server: formatTarget(ex.server),
    method: ex.request.method,
    path: redactUrlQuery(ex.request.path),
    status: ex.response?.status ?? null,
    authorization: authorizationScheme(ex.request.headers.authorization),
  };
  if (flow.challenge) fields.challenge = flow.challenge;
  Object.assign(fields, details);

  // Body problems matter only for the bodies the record is made from.
  const problems: Record<string, string> = {};
  const usesRequest = step === "token" || step === "registration";
  const usesResponse = step !== "challenge" && ex.response !== null;
  let truncated = false;
  if (usesRequest && requestBody) {
    truncated ||= requestBody.truncated;
    if (requestBody.problem) problems.request = requestBody.problem;
  }
  if (usesResponse && responseBody) {
    truncated ||= responseBody.truncated;
    const problem = responseBody.problem ?? responseJson?.problem;
    // An empty error page (a 404 on a discovery URL the client merely tried) is no body problem.
    const emptyError = responseBody.text === "" && (ex.response?.status ?? 0) >= 300;
    if (problem && !emptyError) problems.response = problem;
  }
  if (truncated) fields.truncated = true;
  if (Object.keys(problems).length > 0) fields.bodyProblems = problems;
  if (ex.error) fields.exchangeError = ex.error.code;

  const failedOAuth = (step === "token" || step === "registration") && (ex.response?.status ?? 0) >= 400;
  const secrets = knownSecrets(ex.request.headers, requestValue, responseJson?.value);
  return { level: ex.error || failedOAuth ? "warn" : "info", fields: scrubValues(fields, secrets) };
}

/**
 * The credentials this exchange carried (Authorization credentials, secret members of both bodies). Servers
 * echo them in free text ("refresh token 8xZ… expired"), where no pattern can spot them: they are removed
 * by value from every string of the record.
 */
function knownSecrets(
  headers: IncomingHttpHeaders,
  requestValue: Record<string, unknown> | undefined,
  responseValue: Record<string, unknown> | undefined,
): string[] {
  const found = new Set<string>(headerCredentials(headers));
  const add = (value: unknown): void => {
    if (typeof value === "string" && value.length >= MIN_SCRUBBED_CHARS) found.add(value);
    else if (Array.isArray(value)) value.forEach(add);
  };
  for (const body of [requestValue, responseValue]) {
    if (!body) continue;
    for (const [name, value] of Object.entries(body)) if (name === "code" || isSecretMemberName(name)) add(value);
  }
  // Longest first, so a secret that contains another is removed whole.
  return [...found].sort((a, b) => b.length - a.length);
}

/** The request body as name → value, from a form or a JSON object; undefined when it is neither. */
function parseRequestBody(body: CapturedBody, headers: IncomingHttpHeaders): Record<string, unknown> | undefined {
  const media = mediaTypeOf(headers["content-type"]);
  if (media === "application/x-www-form-urlencoded") {
    // A cut-off form still names its parameters; only whitelisted values are ever copied.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [name, value] of new URLSearchParams(body.text)) {
      const previous = out[name];
      if (previous === undefined) out[name] = value;
      else out[name] = Array.isArray(previous) ? [...previous, value] : [previous, value];
    }
    return out;
  }
  if (body.truncated || body.problem) return undefined;
  // JSON-RPC bodies land here too: skip the parse unless an OAuth member is named at all.
  if (!body.text.includes('"grant_type"') && !body.text.includes('"redirect_uris"')) return undefined;
  const parsed = parseJsonText(body.text);
  return parsed.ok && isObject(parsed.value) ? parsed.value : undefined;
}

function parseResponseBody(body: CapturedBody): { value?: Record<string, unknown>; problem?: BodyProblemName } {
  if (body.truncated || body.problem) return {};
  if (body.text.trim() === "") return { problem: "not_json" };
  const parsed = parseJsonText(body.text);
  if (!parsed.ok) return { problem: body.text.trimStart().startsWith("{") ? "invalid_json" : "not_json" };
  return isObject(parsed.value) ? { value: parsed.value } : { problem: "not_json" };
}

function tokenRequest(body: Record<string, unknown>, headers: IncomingHttpHeaders): Record<string, unknown> {
  const has = (name: string) => body[name] !== undefined && body[name] !== "";
  const out: Record<string, unknown> = { grant_type: text(String(first(body.grant_type))) };
  copyString(out, "client_id", first(body.client_id), clientId);
  copyString(out, "scope", first(body.scope), text);
  const resource = stringList(body.resource, url);
  if (resource) out.resource = resource.length === 1 ? resource[0] : resource;
  copyString(out, "redirect_uri", first(body.redirect_uri), url);
  out.code = has("code");
  out.code_verifier = has("code_verifier");
  out.refresh_token = has("refresh_token");
  out.client_secret = has("client_secret");
  out.client_assertion = has("client_assertion");
  const scheme = authorizationScheme(headers.authorization);
  out.client_auth =
    scheme === "Basic" ? "client_secret_basic" : has("client_assertion") ? "private_key_jwt" : has("client_secret") ? "client_secret_post" : "none";
  return out;
}

function tokenResponse(body: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (body) {
    copyString(out, "token_type", body.token_type, text);
    const expires = typeof body.expires_in === "string" && /^\d{1,12}$/.test(body.expires_in) ? Number(body.expires_in) : body.expires_in;
    if (typeof expires === "number" && Number.isFinite(expires)) out.expires_in = expires;
    copyString(out, "scope", body.scope, text);
  }
  out.access_token = typeof body?.access_token === "string";
  out.refresh_token = typeof body?.refresh_token === "string";
  out.id_token = typeof body?.id_token === "string";
  if (body) {
    copyString(out, "error", body.error, text);
    copyString(out, "error_description", body.error_description, text);
  }
  return out;
}

function registrationRequest(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  copyString(out, "client_name", body.client_name, text);
  out.redirect_uris = stringList(body.redirect_uris, url) ?? [];
  const grants = stringList(body.grant_types, text);
  if (grants) out.grant_types = grants;
  const responses = stringList(body.response_types, text);
  if (responses) out.response_types = responses;
  copyString(out, "token_endpoint_auth_method", body.token_endpoint_auth_method, text);
  copyString(out, "scope", body.scope, text);
  return out;
}

function registrationResponse(body: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (body) copyString(out, "client_id", body.client_id, clientId);
  out.client_secret = typeof body?.client_secret === "string" && body.client_secret !== "";
  if (body && typeof body.client_secret_expires_at === "number") out.client_secret_expires_at = body.client_secret_expires_at;
  out.registration_access_token = typeof body?.registration_access_token === "string";
  if (body) {
    copyString(out, "token_endpoint_auth_method", body.token_endpoint_auth_method, text);
    copyString(out, "error", body.error, text);
    copyString(out, "error_description", body.error_description, text);
  }
  return out;
}

const METADATA_STRINGS = ["resource", "issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint"] as const;
const METADATA_LISTS = [
  "authorization_servers",
  "scopes_supported",
  "code_challenge_methods_supported",
  "grant_types_supported",
  "token_endpoint_auth_methods_supported",
] as const;

function discoveryMetadata(body: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!body) return undefined;
  const out: Record<string, unknown> = {};
  for (const name of METADATA_STRINGS) copyString(out, name, body[name], url);
  for (const name of METADATA_LISTS) {
    const list = stringList(body[name], name === "authorization_servers" ? url : text);
    if (list) out[name] = list;
  }
  if (typeof body.client_id_metadata_document_supported === "boolean") {
    out.client_id_metadata_document_supported = body.client_id_metadata_document_supported;
  }
  return out;
}

// ---------------------------------------------------------------- values from the wire

/** The scheme of an Authorization header, from a fixed list ("other" otherwise); null without one. */
export function authorizationScheme(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  const match = /^([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s+\S/.exec(value.trim());
  return (match && KNOWN_SCHEMES.get(match[1]!.toLowerCase())) ?? "other";
}

/** Free text with credentials hidden, then capped (redaction first: a cut JWT would no longer match). */
function text(value: string): string {
  const clean = redactText(value);
  return clean.length > MAX_STRING_CHARS ? `${clean.slice(0, MAX_STRING_CHARS)}…` : clean;
}

function url(value: string): string {
  return text(redactUrlQuery(value));
}

function clientId(value: string): string {
  return /^https?:\/\//i.test(value) ? url(value) : text(value);
}

function first(value: unknown): unknown {
  return Array.isArray(value) ? value[0] : value;
}

function copyString(out: Record<string, unknown>, name: string, value: unknown, clean: (v: string) => string): void {
  if (typeof value === "string") out[name] = clean(value);
}

function stringList(value: unknown, clean: (v: string) => string): string[] | undefined {
  if (typeof value === "string") return [clean(value)];
  if (!Array.isArray(value)) return undefined;
  return value
    .filter((item): item is string => typeof item === "string")
    .slice(0, MAX_ARRAY_ITEMS)
    .map(clean);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------- bounded body capture

/** Keeps the first `limit` decoded bytes of a body (content-encoding undone); never throws. */
function capture(headers: IncomingHttpHeaders, limit: number): Capture {
  const chunks: Buffer[] = [];
  let truncated = false;
  let aborted = false;
  let problem: BodyProblemName | null = null;
  const result = (): CapturedBody => ({
    text: Buffer.concat(chunks).toString("utf8"),
    truncated,
    problem: problem ?? (aborted ? "aborted" : null),
  });
  const created = createContentDecoder(headers["content-encoding"], {
    maxBytes: limit,
    onData: (chunk) => chunks.push(chunk),
    onProblem: (p) => {
      if (p.code === "decode_limit") truncated = true;
      else problem ??= p.code === "unsupported_encoding" || p.code === "decode_error" ? p.code : "decoder_failed";
    },
  });
  if (!created.ok) {
    problem = "unsupported_encoding";
    return { tap: { data() {}, end() {} }, done: Promise.resolve(), result };
  }
  const decoder = created.decoder;
  const tap = guardedDecoderTap(
    decoder,
    () => (problem ??= "decoder_failed"),
    () => (aborted = true),
  );
  return { tap, done: decoder.done, result };
}
