import type { IncomingHttpHeaders } from "node:http";
import { mediaTypeOf } from "../../body/index.js";
import { findChallenge, parseWwwAuthenticate, type AuthChallenge } from "../www-authenticate.js";
import type { AuthFlow, AuthStep, DiscoveryDocument } from "./flow.js";
import { discoveryMetadata, registrationRequest, registrationResponse, tokenRequest, tokenResponse } from "./summaries.js";
import { first, text, url } from "./wire-values.js";

const WELL_KNOWN = /(?:^|\/)\.well-known\/(oauth-protected-resource|oauth-authorization-server|openid-configuration)(?:\/|$)/;

/** Headers only an MCP request carries: such a POST is JSON-RPC, not OAuth. */
const MCP_HINTS = ["mcp-session-id", "mcp-protocol-version", "mcp-method"] as const;

/** The challenge parameters a record names, in this order, and how each is cleaned. */
const CHALLENGE_PARAMS: readonly (readonly [name: string, clean: (value: string) => string])[] = [
  ["realm", text],
  ["resource_metadata", url],
  ["scope", text],
  ["error", text],
  ["error_description", text],
];

/** `/.well-known/oauth-protected-resource[/path]` and friends (also `/issuer/.well-known/openid-configuration`). */
export function discoveryDocument(pathWithQuery: string): DiscoveryDocument | undefined {
  const path = pathWithQuery.split(/[?#]/, 1)[0] ?? "";
  return WELL_KNOWN.exec(path)?.[1] as DiscoveryDocument | undefined;
}

export function mayCarryOAuthBody(headers: IncomingHttpHeaders): boolean {
  if (MCP_HINTS.some((name) => headers[name] !== undefined)) return false;
  const media = mediaTypeOf(headers["content-type"]);
  return media === "application/x-www-form-urlencoded" || media === "application/json" || (media?.endsWith("+json") ?? false);
}

/** A Bearer challenge on a 401, or on a 403 that asks for more scope. */
export function challengeOf(status: number, headers: IncomingHttpHeaders): Record<string, string> | undefined {
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
  for (const [name, clean] of CHALLENGE_PARAMS) {
    const value = c.params.get(name);
    if (value !== undefined) out[name] = clean(value);
  }
  return out;
}

/**
 * Which step a finished exchange was, with that step's summary; undefined when it was no OAuth traffic
 * after all. A token request names a grant_type, a registration (JSON) lists redirect_uris.
 */
export function classifyStep(
  flow: AuthFlow,
  requestValue: Record<string, unknown> | undefined,
  responseValue: Record<string, unknown> | undefined,
): { step: AuthStep; details: Record<string, unknown> } | undefined {
  const ex = flow.ex;
  const details: Record<string, unknown> = {};
  const json = mediaTypeOf(ex.request.headers["content-type"]) !== "application/x-www-form-urlencoded";
  if (requestValue && typeof first(requestValue.grant_type) === "string") {
    details.request = tokenRequest(requestValue, ex.request.headers);
    if (ex.response) details.response = tokenResponse(responseValue);
    return { step: "token", details };
  }
  if (requestValue && json && Array.isArray(requestValue.redirect_uris)) {
    details.request = registrationRequest(requestValue);
    if (ex.response) details.response = registrationResponse(responseValue);
    return { step: "registration", details };
  }
  if (flow.document) {
    details.document = flow.document;
    const metadata = discoveryMetadata(responseValue);
    if (metadata) details.metadata = metadata;
    return { step: "discovery", details };
  }
  if (flow.challenge) return { step: "challenge", details };
  return undefined;
}
