import { computeArgsHash } from "../util/canonical-json.js";
import { appMarks } from "../apps/app-messages.js";
import type { RpcEvent } from "../mcp/rpc-event.js";
import type { SessionRecord } from "../mcp/sessions.js";
import { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_PAYLOAD_MODE, measurePayload, shapePayload, type PayloadMode } from "../log/payload.js";
import { maskAtPointers, redactBody, redactUrlQuery } from "../log/redact.js";
import { JUDGEMENT_FAILED_RULE } from "../mcp/replies.js";
import { SCANNED_PREFIX_BYTES, scanForSecrets, scanOfFindings, type SecretScan } from "../log/secret-masks.js";

export interface PayloadOptions {
  payloads: PayloadMode;
  maxPayloadBytes: number;
  /** The policy's secrets detector is off: payloads are scanned for secrets here, for the record. */
  scanSecrets?: boolean;
}

const DEFAULT_PAYLOAD_OPTIONS: PayloadOptions = { payloads: DEFAULT_PAYLOAD_MODE, maxPayloadBytes: DEFAULT_MAX_PAYLOAD_BYTES };

const PAYLOAD_FIELD = { request: "params", notification: "params", response: "result", error: "error" } as const;

/** The `event: "rpc"` record of one message (the contract is in docs/log-format.md). */
export function rpcRecord(e: RpcEvent, opts: PayloadOptions, hidden?: Set<string>): Record<string, unknown> {
  const record: Record<string, unknown> = {
    event: "rpc",
    flow: e.flow,
    transport: e.transport,
    server: e.server,
    ...(e.client !== undefined ? { client: e.client } : {}),
    path: redactUrlQuery(e.path),
    session: sessionField(e.session, e.transport),
    protocolVersion: e.protocolVersion,
    direction: e.direction,
    kind: e.kind,
    id: e.id ?? null,
    method: e.method ?? null,
    tool: e.tool ?? null,
    bytes: e.bytes,
  };
  if (e.latencyMs !== undefined) record.latencyMs = e.latencyMs;
  if (e.decision) record.decision = e.decision;
  const raw = e.raw as Record<string, unknown> | undefined;
  if (e.kind === "request" && e.method === "tools/call") {
    const args = (raw?.params as Record<string, unknown> | undefined)?.arguments ?? {};
    const hash = computeArgsHash(args);
    record.argsHash = hash.hash;
    if (hash.hash === null) record.argsHashError = hash.reason;
  }
  if (e.kind === "request") Object.assign(record, traceContext(raw));
  if (e.related) record.related = e.related;
  if (e.method === "notifications/progress") {
    const params = raw?.params as Record<string, unknown> | undefined;
    record.progressToken = params?.progressToken ?? null;
  }
  if (e.reason !== undefined) record.reason = e.reason;
  if (e.resultType !== undefined) record.resultType = e.resultType;
  if (e.call !== undefined) record.call = e.call;
  if (e.round !== undefined) record.round = e.round;
  if (e.roundProblem !== undefined) record.roundProblem = e.roundProblem;
  if (e.task !== undefined) record.task = e.task;
  const apps = appMarks(e.kind, e.method, raw);
  if (apps) record.apps = apps;
  // Read from the result as sent, so that it is known with payloads truncated or omitted.
  if (e.kind === "response" && (raw?.result as Record<string, unknown> | undefined)?.isError === true) record.isError = true;
  if (e.headerMismatch) record.headerMismatch = e.headerMismatch;
  if (e.sseEventId !== undefined) record.sseEventId = e.sseEventId;
  if (e.batch) record.batch = e.batch;
  if (e.insecureUpstream) record.insecureUpstream = true;
  if (e.proxyAnswer) record.proxyAnswer = true;
  // Why the message may read otherwise to its receiver, and how many readings were judged (never their content).
  if (e.readability) record.readability = { reason: e.readability.reason, readings: 1 + e.readability.alternates.length };
  if (raw !== undefined) {
    if (e.kind === "invalid" || e.kind === "unanswered") {
      // No detector scanned an invalid message: its secrets are found here.
      record.message = payload(raw, opts, scanForSecrets(raw), hidden);
    } else {
      const field = PAYLOAD_FIELD[e.kind];
      if (field in raw) record[field] = payload(raw[field], opts, decidedScan(e, `/${field}`, raw[field], opts), hidden);
    }
  }
  return record;
}

/**
 * Where the policy's secrets detector found secrets inside this payload field; scanned here when no
 * detector looked (turned off, or the judgement failed): a record masks secrets whatever the policy.
 */
function decidedScan(e: RpcEvent, field: string, value: unknown, opts: PayloadOptions): SecretScan {
  if (opts.scanSecrets === true || !e.decision || e.decision.rules.some((r) => r.name === JUDGEMENT_FAILED_RULE)) return scanForSecrets(value);
  return scanOfFindings(e.decision?.rules.find((r) => r.name === "detector:secrets")?.findings ?? [], field);
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/** W3C trace context a caller put in `params._meta` (MCP's propagation): kept so spans can name their parent. */
function traceContext(raw: Record<string, unknown> | undefined): { traceparent?: string; tracestate?: string } {
  const params = raw?.params;
  const meta = params !== null && typeof params === "object" ? (params as Record<string, unknown>)._meta : undefined;
  if (meta === null || typeof meta !== "object") return {};
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  if (typeof traceparent !== "string" || !TRACEPARENT.test(traceparent)) return {};
  return typeof tracestate === "string" && TRACESTATE.test(tracestate) ? { traceparent, tracestate } : { traceparent };
}

/** Members of a `session` record that hold what the peers sent: shaped and masked like any payload. */
const SESSION_PEER_DATA: ReadonlySet<string> = new Set(["clientInfo", "serverInfo"]);

export function sessionRecord(r: SessionRecord, opts: PayloadOptions = DEFAULT_PAYLOAD_OPTIONS): Record<string, unknown> {
  const record: Record<string, unknown> = { event: "session" };
  for (const [name, value] of Object.entries(r)) {
    if (value === undefined) continue;
    if (SESSION_PEER_DATA.has(name)) record[name] = peerData(value, opts);
    else if (name === "capabilities") {
      const { client, server } = value as NonNullable<SessionRecord["capabilities"]>;
      record.capabilities = { client: peerData(client, opts), server: peerData(server, opts) };
    } else record[name] = value;
  }
  record.session = sessionField(r.session, r.transport);
  return record;
}

function peerData(value: unknown, opts: PayloadOptions): unknown {
  return payload(value, opts, scanForSecrets(value));
}

/**
 * A legacy (HTTP+SSE) session is named by its endpoint URL, whose query may carry a credential
 * (`?sessionId=…&key=…`): redacted like any other path. Streamable HTTP session ids are kept as they are.
 */
function sessionField(session: string | null, transport: string): string | null {
  return session !== null && transport === "http+sse" ? redactUrlQuery(session) : session;
}

/**
 * A payload as the record carries it: secret members redacted, detected secrets masked, then shaped. When
 * the scan stopped at its bounds, only a preview from the scanned start is written, in every mode but none;
 * when nothing was scanned, nothing is written but its size.
 */
function payload(value: unknown, opts: PayloadOptions, scan: SecretScan, hidden?: Set<string>): unknown {
  const clean = maskAtPointers(redactBody(value, hidden), scan.masks);
  if (opts.payloads === "none" || scan.unscanned) {
    const measure = measurePayload(clean);
    return measure ? { omitted: true, ...measure } : undefined;
  }
  if (!scan.complete) return shapePayload(clean, "truncated", Math.min(opts.maxPayloadBytes, SCANNED_PREFIX_BYTES));
  return shapePayload(clean, opts.payloads, opts.maxPayloadBytes);
}
