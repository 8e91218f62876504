import type { IncomingHttpHeaders } from "node:http";
import { authorizationScheme, clientId, copyString, first, stringList, text, url } from "./wire-values.js";

/**
 * What each OAuth step asked and answered, copied member by member from a whitelist: credentials only
 * as booleans ("a client_secret was sent"), every string cleaned on the way.
 */

/**
 * Credentials of the grants of OAuth extensions (OpenID4VCI, RFC 8693 token exchange, RFC 7523 JWT bearer,
 * RFC 8628 device flow, CIBA) and of the password grant: named in a token request's summary when it carried one.
 */
const EXTENSION_CREDENTIALS = ["pre-authorized_code", "tx_code", "subject_token", "actor_token", "assertion", "device_code", "auth_req_id", "password"] as const;

export function tokenRequest(body: Record<string, unknown>, headers: IncomingHttpHeaders): Record<string, unknown> {
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
  for (const name of EXTENSION_CREDENTIALS) if (has(name)) out[name] = true;
  const scheme = authorizationScheme(headers.authorization);
  out.client_auth =
    scheme === "Basic" ? "client_secret_basic" : has("client_assertion") ? "private_key_jwt" : has("client_secret") ? "client_secret_post" : "none";
  return out;
}

export function tokenResponse(body: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (body) {
    copyString(out, "token_type", body.token_type, text);
    copyString(out, "issued_token_type", body.issued_token_type, text);
    const expires = typeof body.expires_in === "string" && /^\d{1,12}$/.test(body.expires_in) ? Number(body.expires_in) : body.expires_in;
    if (typeof expires === "number" && Number.isFinite(expires)) out.expires_in = expires;
    copyString(out, "scope", body.scope, text);
  }
  out.access_token = typeof body?.access_token === "string";
  out.refresh_token = typeof body?.refresh_token === "string";
  out.id_token = typeof body?.id_token === "string";
  if (body) copyError(out, body);
  return out;
}

export function registrationRequest(body: Record<string, unknown>): Record<string, unknown> {
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

export function registrationResponse(body: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (body) copyString(out, "client_id", body.client_id, clientId);
  out.client_secret = typeof body?.client_secret === "string" && body.client_secret !== "";
  if (body && typeof body.client_secret_expires_at === "number") out.client_secret_expires_at = body.client_secret_expires_at;
  out.registration_access_token = typeof body?.registration_access_token === "string";
  if (body) {
    copyString(out, "token_endpoint_auth_method", body.token_endpoint_auth_method, text);
    copyError(out, body);
  }
  return out;
}

/** The OAuth error response members (RFC 6749 §5.2), when the server sent them. */
function copyError(out: Record<string, unknown>, body: Record<string, unknown>): void {
  copyString(out, "error", body.error, text);
  copyString(out, "error_description", body.error_description, text);
}

const METADATA_STRINGS = ["resource", "issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint"] as const;
const METADATA_LISTS = [
  "authorization_servers",
  "scopes_supported",
  "code_challenge_methods_supported",
  "grant_types_supported",
  "token_endpoint_auth_methods_supported",
] as const;

export function discoveryMetadata(body: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
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
