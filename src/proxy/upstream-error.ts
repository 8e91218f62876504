import type { ExchangeError } from "./exchange.js";

const TLS_CODES = new Set([
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_REVOKED",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
]);

/** The certificate is fine but chains to no CA the proxy trusts: the user can fix that with a flag. */
const UNTRUSTED_CODES = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
]);

const UNTRUSTED_ADVICE =
  "if the server uses a private CA, start mcp-wiretap with --upstream-ca FILE (that CA's certificate, PEM); " +
  "--insecure-upstream skips the check (last resort)";

/** Node appends advice for its own command line ("try running Node.js with --use-system-ca"): not ours. */
const NODE_ADVICE = /;\s*if the root CA is installed locally, try running Node\.js with\s+--use-system-ca\s*$/;

const CONNECT_CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  ECONNRESET: "connection reset",
  EPIPE: "connection closed",
  ENOTFOUND: "name does not resolve",
  EAI_AGAIN: "name resolution failed (temporary)",
};

/** Turns an error from the proxy→server leg into a stable code and a one-line message. */
export function classifyUpstreamError(err: NodeJS.ErrnoException, server: string): ExchangeError {
  const code = err.code ?? "";
  if (TLS_CODES.has(code) || code.startsWith("ERR_SSL") || code.startsWith("ERR_TLS") || /certificate/i.test(err.message)) {
    const reason = err.message.replace(NODE_ADVICE, "");
    const advice = UNTRUSTED_CODES.has(code) ? `; ${UNTRUSTED_ADVICE}` : "";
    return { code: "upstream_tls", message: `TLS handshake with ${server} failed: ${reason} (${code || "TLS error"})${advice}`, tlsError: code || reason };
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return { code: "upstream_dns", message: `${server}: ${CONNECT_CODES[code]}` };
  }
  if (code === "ECONNRESET" || code === "EPIPE" || err.message === "socket hang up") {
    return { code: "upstream_reset", message: `${server}: ${CONNECT_CODES[code] ?? err.message}` };
  }
  if (code === "UPSTREAM_CONNECT_TIMEOUT") {
    return { code: "upstream_timeout", message: `${server}: no connection within the connect timeout` };
  }
  if (code === "UPSTREAM_TLS_TIMEOUT") {
    return { code: "upstream_timeout", message: `${server}: no TLS handshake within the connect timeout` };
  }
  if (code in CONNECT_CODES) {
    return { code: "upstream_connect", message: `${server}: ${CONNECT_CODES[code]}` };
  }
  return { code: "upstream_error", message: `${server}: ${err.message}${code ? ` (${code})` : ""}` };
}
