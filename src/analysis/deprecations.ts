import { str, type LogRecord } from "../saved-logs/filters.js";

/** The first revision that deprecates or removes features, and what it says about them. */
export const STATELESS_REVISION = "2026-07-28";

/**
 * Methods the 2026-07-28 revision removes or deprecates (the revision's changelog: `ping`,
 * `logging/setLevel` and `resources/subscribe` removed; roots, sampling and logging deprecated).
 */
const METHODS: Record<string, string> = {
  ping: "removed in 2026-07-28",
  "logging/setLevel": "removed in 2026-07-28 (log level per request in _meta)",
  "resources/subscribe": "removed in 2026-07-28 (subscriptions/listen replaces it)",
  "roots/list": "roots are deprecated in 2026-07-28",
  "notifications/roots/list_changed": "roots are deprecated in 2026-07-28",
  "sampling/createMessage": "sampling is deprecated in 2026-07-28",
  "notifications/message": "logging is deprecated in 2026-07-28",
};

/** Revisions are dates: a later one sorts after an earlier one. */
export function atLeast(version: string | null, revision: string): boolean {
  return version !== null && /^\d{4}-\d\d-\d\d$/.test(version) && version >= revision;
}

/** Why a record uses something its own revision deprecates or removes; null when it does not. */
export function deprecationOf(r: LogRecord): string | null {
  if (r.event !== "rpc") return null;
  const version = str(r.protocolVersion);
  if (!atLeast(version, STATELESS_REVISION)) return null;
  if (r.transport === "http+sse") return `the HTTP+SSE transport is deprecated in ${STATELESS_REVISION} (negotiated ${version})`;
  const kind = str(r.kind);
  if (kind !== "request" && kind !== "notification") return null;
  const method = str(r.method);
  return method !== null && Object.hasOwn(METHODS, method) ? `${method}: ${METHODS[method]}` : null;
}
