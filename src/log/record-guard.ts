import type { ExchangeSecrets } from "./exchange-secrets.js";
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
 * Identifying members whose values a peer chooses (a request id, a method or tool name, an SSE event id, a
 * progress token): never scrubbed by value (a credential equal to `tools/call` must not erase the method), but
 * a value with the shape of a secret is masked like any other member's.
 */
const PEER_CHOSEN_IDENTITY: ReadonlySet<string> = new Set(["id", "method", "tool", "sseEventId", "progressToken", "related"]);

/**
 * The last step before any record is serialized, whoever wrote it: the credentials its exchange carried
 * are removed by value, and secrets the detector recognises by shape (a token in an ordinary response
 * header, in an OAuth error text) are masked in every member but those identifying the message.
 */
export function guardRecord<T extends Record<string, unknown>>(record: T, secrets: ExchangeSecrets): T {
  const scrubbed = secrets.scrub(record);
  const maskedAtBuild = MASKED_AT_BUILD.get(scrubbed.event) ?? NONE;
  let copy: Record<string, unknown> | null = null;
  for (const name of Object.keys(scrubbed)) {
    if ((IDENTITY_MEMBERS.has(name) && !PEER_CHOSEN_IDENTITY.has(name)) || maskedAtBuild.has(name)) continue;
    const member = scrubbed[name];
    const masked = maskShaped(member, 0, name);
    if (masked !== member) defineMember((copy ??= { ...scrubbed }), name, masked);
  }
  const decision = withMaskedReasons(scrubbed.decision);
  if (decision !== scrubbed.decision) defineMember((copy ??= { ...scrubbed }), "decision", decision);
  return (copy ?? scrubbed) as T;
}

/**
 * A decision identifies the message (never scrubbed by value), but its rules' reasons may quote what the
 * peer sent (a routing header, a duplicated member name): those are masked by shape.
 */
function withMaskedReasons(decision: unknown): unknown {
  if (!isPlainObject(decision) || !Array.isArray(decision.rules)) return decision;
  const given = decision.rules as unknown[];
  let rules: unknown[] | null = null;
  given.forEach((rule, i) => {
    if (!isPlainObject(rule)) return;
    const reason = typeof rule.reason === "string" ? maskShapedTextOnce(rule.reason, "reason") : rule.reason;
    // A finding's detail may quote what the peer named (an unknown tool's name): masked by shape too.
    const findings = Array.isArray(rule.findings) ? maskShaped(rule.findings) : rule.findings;
    if (reason === rule.reason && findings === rule.findings) return;
    const masked: Record<string, unknown> = { ...rule };
    if (reason !== rule.reason) masked.reason = reason;
    if (findings !== rule.findings) masked.findings = findings;
    (rules ??= given.slice())[i] = masked;
  });
  return rules === null ? decision : { ...decision, rules };
}

/**
 * Strings, and member names, that hold a secret read `[redacted: <type>]`; unchanged parts are shared. Records
 * are small (headers, error texts, OAuth summaries): each long enough string is scanned on its own.
 */
function maskShaped(value: unknown, depth = 0, memberName?: string): unknown {
  if (typeof value === "string") return maskShapedTextOnce(value, memberName);
  if (typeof value !== "object" || value === null || depth > 64) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const clean = maskShaped(value[i], depth + 1);
      if (clean !== value[i]) (copy ??= value.slice())[i] = clean;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | null = null;
  let renamed = false;
  for (const name of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[name];
    const clean = maskShaped(member, depth + 1, name);
    // A peer chooses header and member names too: a token sent as a header's name is masked like a value.
    const cleanName = maskShaped(name, depth + 1);
    if (clean === member && cleanName === name) continue;
    if (cleanName !== name) renamed = true;
    if (copy === null) {
      copy = {};
      for (const k of Object.keys(value)) defineMember(copy, k, (value as Record<string, unknown>)[k]);
    }
    defineMember(copy, name, clean);
  }
  return copy === null ? value : renamed ? withMaskedNames(copy) : copy;
}

/** The same members with every name holding a secret masked (numbered when two names mask alike). */
function withMaskedNames(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(value)) {
    let clean = maskShaped(name) as string;
    for (let n = 2; clean !== name && Object.hasOwn(out, clean); n++) clean = `${maskShaped(name) as string} #${n}`;
    defineMember(out, clean, value[name]);
  }
  return out;
}
