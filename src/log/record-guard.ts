import type { ExchangeSecrets } from "./exchange-secrets.js";
import { maskByShape } from "./mask-by-shape.js";
import { defineMember, isPlainObject } from "./redact/members.js";
import { IDENTITY_MEMBERS } from "./redact/scrub.js";
import { maskShapedTextOnce } from "./shaped-secrets.js";

/**
 * Members masked when their record was built (payloads, from the policy's findings or scanned there). The
 * other members of those records (path, trace context, routing headers, the reasons of a decision)
 * are masked here like any record's.
 */
const MASKED_AT_BUILD: ReadonlyMap<unknown, ReadonlySet<string>> = new Map([
  ["rpc", new Set(["params", "result", "error", "message"])],
  ["session", new Set(["clientInfo", "serverInfo", "capabilities"])],
]);
const NONE: ReadonlySet<string> = new Set();

/**
 * Identifying members whose values a peer chooses (a request id, a method or tool name, a progress token):
 * never scrubbed by value (a credential equal to `tools/call` must not erase the method), but
 * a value with the shape of a secret is masked like any other member's.
 */
const PEER_CHOSEN_IDENTITY: ReadonlySet<string> = new Set(["id", "method", "tool", "progressToken", "related"]);

/**
 * The last step before any record is serialized, whoever wrote it: the credentials its exchange carried
 * are removed by value, and secrets the detector recognises by shape (a token in an ordinary response
 * header, in an OAuth error text) are masked in every member but those identifying the message, member names
 * and any depth included; unchanged parts are shared. Records are small (headers, error texts, OAuth
 * summaries): each long enough string is scanned on its own, once while it is found clean.
 */
export function guardRecord<T extends Record<string, unknown>>(record: T, secrets: ExchangeSecrets): T {
  const scrubbed = secrets.scrub(record);
  const maskedAtBuild = MASKED_AT_BUILD.get(scrubbed.event) ?? NONE;
  let copy: Record<string, unknown> | null = null;
  for (const name of Object.keys(scrubbed)) {
    if ((IDENTITY_MEMBERS.has(name) && !PEER_CHOSEN_IDENTITY.has(name)) || maskedAtBuild.has(name)) continue;
    const member = scrubbed[name];
    const masked = maskByShape(member, maskShapedTextOnce, name);
    if (masked !== member) defineMember((copy ??= { ...scrubbed }), name, masked);
  }
  const decision = withMaskedReasons(scrubbed.decision);
  if (decision !== scrubbed.decision) defineMember((copy ??= { ...scrubbed }), "decision", decision);
  return (copy ?? scrubbed) as T;
}

/**
 * A decision identifies the message (never scrubbed by value), but its rules' reasons and findings may quote
 * what the peer sent (a routing header, a duplicated member name, an unknown tool's name): masked by shape.
 */
function withMaskedReasons(decision: unknown): unknown {
  if (!isPlainObject(decision) || !Array.isArray(decision.rules)) return decision;
  const rules = maskByShape(decision.rules, maskShapedTextOnce);
  return rules === decision.rules ? decision : { ...decision, rules };
}
