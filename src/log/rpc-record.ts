import { computeArgsHash } from "../mcp/canonical-json.js";
import type { RpcEvent } from "../mcp/rpc-event.js";
import type { SessionRecord } from "../mcp/sessions.js";
import { measurePayload, shapePayload, type PayloadMode } from "./payload.js";
import { maskAtPointers, redactBody, redactUrlQuery } from "./redact.js";

export interface PayloadOptions {
  payloads: PayloadMode;
  maxPayloadBytes: number;
}

const PAYLOAD_FIELD = { request: "params", notification: "params", response: "result", error: "error" } as const;

/** The `event: "rpc"` record of one message (the contract is in docs/log-format.md). */
export function rpcRecord(e: RpcEvent, opts: PayloadOptions): Record<string, unknown> {
  const record: Record<string, unknown> = {
    event: "rpc",
    flow: e.flow,
    transport: e.transport,
    server: e.server,
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
  // Read from the result as sent, so that it is known with payloads truncated or omitted.
  if (e.kind === "response" && (raw?.result as Record<string, unknown> | undefined)?.isError === true) record.isError = true;
  if (e.headerMismatch) record.headerMismatch = e.headerMismatch;
  if (e.sseEventId !== undefined) record.sseEventId = e.sseEventId;
  if (e.batch) record.batch = e.batch;
  if (e.insecureUpstream) record.insecureUpstream = true;
  if (raw !== undefined) {
    if (e.kind === "invalid" || e.kind === "unanswered") {
      record.message = payload(raw, opts, []);
    } else {
      const field = PAYLOAD_FIELD[e.kind];
      if (field in raw) record[field] = payload(raw[field], opts, secretMasks(e, `/${field}`));
    }
  }
  return record;
}

/** Where the secrets detector found secrets inside this payload field (pointers relative to the field). */
function secretMasks(e: RpcEvent, field: string): { pointer: string; what: string }[] {
  const found = e.decision?.rules.find((r) => r.name === "detector:secrets")?.findings ?? [];
  return found
    .filter((f) => f.path === field || f.path.startsWith(`${field}/`))
    .map((f) => ({ pointer: f.path.slice(field.length), what: f.type }));
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

export function sessionRecord(r: SessionRecord): Record<string, unknown> {
  return { event: "session", ...(redactBody(r) as object), session: sessionField(r.session, r.transport) };
}

/**
 * A legacy (HTTP+SSE) session is named by its endpoint URL, whose query may carry a credential
 * (`?sessionId=…&key=…`): redacted like any other path. Streamable HTTP session ids are kept as they are.
 */
function sessionField(session: string | null, transport: string): string | null {
  return session !== null && transport === "http+sse" ? redactUrlQuery(session) : session;
}

function payload(value: unknown, opts: PayloadOptions, masks: { pointer: string; what: string }[]): unknown {
  const clean = maskAtPointers(redactBody(value), masks);
  if (opts.payloads === "none") {
    const measure = measurePayload(clean);
    return measure ? { omitted: true, ...measure } : undefined;
  }
  return shapePayload(clean, opts.payloads, opts.maxPayloadBytes);
}
