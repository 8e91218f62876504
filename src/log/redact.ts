/**
 * Secrets never reach a log: credentials in headers, OAuth token requests and responses, query
 * strings and free text are replaced by REDACTED before anything is written (names are judged by their
 * words, names.ts), and each exchange's credentials are removed by value from all its records
 * (../exchange-secrets.ts, applied to every record by ../record-guard.ts).
 * What stays visible on purpose: the Authorization scheme ("Bearer [redacted]"), `Mcp-Session-Id`
 * and `sessionId` query parameters (needed for correlation), `progressToken` (links progress to
 * its request) and JSON members named `code` (JSON-RPC error codes).
 */

export { isSecretMemberName, isSecretParamName, REDACTED } from "./redact/names.js";
export { headerCredentials, redactHeaders } from "./redact/headers.js";
export { maskAtPointers, redactBody } from "./redact/json-body.js";
export { decodeParamName, queryCredentials, redactFormBody, redactUrlQuery, redactUserinfo } from "./redact/query.js";
export { redactText } from "./redact/text.js";
export { longestFirst, MIN_SCRUBBED_CHARS, scrubValues } from "./redact/scrub.js";
