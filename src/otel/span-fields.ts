/**
 * The pure pieces of records → spans (mcp-spans.ts pairs them): a span's shape, its attributes from a
 * request record, the key that pairs a request with what ends it, the decision counters, and the cuts that
 * keep every attribute bounded whatever a peer sends.
 */
import { createHash } from "node:crypto";
import { redactUrlQuery } from "../log/redact.js";
import { ownString } from "../util/own-string.js";
import { methodForMetrics } from "./mcp-methods.js";
import { requestKey, type Direction } from "../mcp/correlator.js";
import type { RequestId } from "../mcp/jsonrpc.js";

export type Attributes = Record<string, string | number | boolean | string[]>;

export interface McpSpan {
  name: string;
  /** Milliseconds since the epoch. */
  startMs: number;
  endMs: number;
  attributes: Attributes;
  /** Set for failed calls: the JSON-RPC error message (or why the call failed). */
  error: { type: string; message: string } | null;
  events: { name: string; timeMs: number; attributes: Attributes }[];
  /** W3C trace context the caller put in `params._meta`: the span's parent. */
  parent: { traceparent: string; tracestate?: string } | null;
}

export interface DecisionCount {
  action: string;
  rule: string;
}

export interface SpanOptions {
  /** Put (redacted, shaped) arguments and results on spans: `gen_ai.tool.call.arguments` / `.result`. */
  payloads: boolean;
  /** Open requests remembered at most; the oldest is closed as `evicted` beyond. */
  maxOpen?: number;
  /** Estimated bytes of the open requests' spans at most; the oldest are closed as `evicted` beyond. */
  maxOpenBytes?: number;
}

export type Rec = Record<string, unknown>;

/** Attribute strings beyond this are cut: span size stays bounded whatever a peer sends. */
const MAX_ATTRIBUTE_CHARS = 8_192;
/** Identifiers (method, id, session, tool and prompt names, protocol version) are cut shorter. */
const MAX_NAME_CHARS = 256;

/** One count per rule of a message's decision (`rule: "none"` when no rule fired): the decision counters. */
export function decisionCounts(r: Rec): DecisionCount[] {
  if (r.event !== "rpc" && r.event !== "policy") return [];
  const decision = asRecord(r.decision);
  if (!decision || typeof decision.action !== "string") return [];
  const names = ruleNames(decision);
  return (names.length > 0 ? names : ["none"]).map((rule) => ({ action: decision.action as string, rule }));
}

/**
 * Attributes of the duration histogram for a finished span (low cardinality only): the SDK keeps every
 * attribute set for the process's life (up to 2,000 per metric), so the method is one of the MCP methods
 * or `other`, and the names a server chooses are cut.
 */
export function durationAttributes(span: McpSpan): Attributes {
  const out: Attributes = {};
  for (const key of ["gen_ai.tool.name", "gen_ai.prompt.name", "error.type", "mcp.protocol.version", "network.transport"]) {
    const v = span.attributes[key];
    if (v !== undefined) out[key] = v;
  }
  const method = span.attributes["mcp.method.name"];
  if (typeof method === "string") out["mcp.method.name"] = methodForMetrics(method);
  return out;
}

export function requestSpan(r: Rec, time: number, opts: SpanOptions): McpSpan {
  const method = typeof r.method === "string" ? cutName(r.method) : "unknown";
  const params = asRecord(r.params);
  const a: Attributes = { "mcp.method.name": method, "jsonrpc.request.id": cutName(String(r.id)) };
  // The conventions' value for stdio is `pipe`; every other transport is HTTP over TCP.
  if (r.transport === "stdio") a["network.transport"] = "pipe";
  else Object.assign(a, { "network.transport": "tcp", "network.protocol.name": "http" });
  let target: string | undefined;
  if (method === "tools/call" && typeof r.tool === "string") {
    target = a["gen_ai.tool.name"] = cutName(r.tool);
    a["gen_ai.operation.name"] = "execute_tool";
  }
  if (method === "prompts/get" && typeof params?.name === "string") target = a["gen_ai.prompt.name"] = cutName(params.name);
  if (method.startsWith("resources/") && typeof params?.uri === "string") a["mcp.resource.uri"] = cut(redactUrlQuery(params.uri));
  if (typeof r.session === "string") a["mcp.session.id"] = cutName(r.session);
  if (typeof r.protocolVersion === "string") a["mcp.protocol.version"] = cutName(r.protocolVersion);
  const server = splitServer(r.server);
  if (server) {
    a["server.address"] = cutName(server.address);
    a["server.port"] = server.port;
  }
  const client = splitServer(r.client);
  if (client) {
    a["client.address"] = cutName(client.address);
    a["client.port"] = client.port;
  }
  if (typeof r.transport === "string") a["mcp_wiretap.transport"] = cutName(r.transport);
  if (typeof r.flow === "string") a["mcp_wiretap.flow"] = cutName(r.flow);
  if (r.direction === "server_to_client") a["mcp_wiretap.direction"] = "server_to_client";
  if (opts.payloads && params && "arguments" in params) a["gen_ai.tool.call.arguments"] = cut(JSON.stringify(params.arguments));
  // The W3C propagator reads a valid traceparent (55 characters) and at most 32 tracestate members.
  const parent = typeof r.traceparent === "string" ? { traceparent: cutName(r.traceparent), ...(typeof r.tracestate === "string" ? { tracestate: cut(r.tracestate) } : {}) } : null;
  return { name: target === undefined ? method : `${method} ${target}`, startMs: time, endMs: time, attributes: a, error: null, events: [], parent };
}

export function endError(r: Rec): McpSpan["error"] {
  if (r.kind === "error") {
    const error = asRecord(r.error);
    const code = typeof error?.code === "number" && Number.isInteger(error.code) ? String(error.code) : "_OTHER";
    return { type: code, message: typeof error?.message === "string" ? cut(error.message) : "JSON-RPC error" };
  }
  if (r.kind === "unanswered") return { type: "unanswered", message: typeof r.reason === "string" ? cut(r.reason) : "unanswered" };
  if (r.isError === true) return { type: "tool_error", message: "the tool reported an error (isError: true)" };
  return null;
}

export function decisionAttributes(decision: Rec | undefined): Attributes {
  if (!decision || typeof decision.action !== "string") return {};
  return {
    "mcp_wiretap.decision.action": decision.action,
    "mcp_wiretap.decision.rules": ruleNames(decision),
    "mcp_wiretap.decision.enforced": decision.enforced === true,
  };
}

const SEVERITY: Record<string, number> = { allow: 0, flag: 1, deny: 2 };

/** The more severe of the request's and the answer's decisions, with the rules of both. */
export function worst(a: Rec | undefined, b: Rec | undefined): Rec | undefined {
  if (!a || !b) return a ?? b;
  const top = (SEVERITY[String(b.action)] ?? 0) > (SEVERITY[String(a.action)] ?? 0) ? b : a;
  const rules = [...asArray(a.rules), ...asArray(b.rules)];
  return { action: top.action, enforced: a.enforced === true || b.enforced === true, rules };
}

export function ruleNames(decision: Rec): string[] {
  const names = asArray(decision.rules).map((rule) => asRecord(rule)?.name).filter((n): n is string => typeof n === "string");
  return [...new Set(names)].map(cut);
}

/** A long part of a key (an id, a session a peer chose) by its digest: two ids alike up to a cut stay apart. */
function keyPart(value: string): string {
  return value.length <= MAX_NAME_CHARS ? value : `#${createHash("sha256").update(value).digest("base64")}`;
}

/**
 * The correlator's key of the request a record belongs to: by session (responses may come on another
 * exchange: legacy SSE, GET stream), else by exchange. Long parts a peer chose are kept as digests.
 */
export function spanKey(r: Rec, id: RequestId, direction: Direction | null): string {
  const scope = typeof r.session === "string" ? r.session : String(r.flow);
  return requestKey(keyPart(String(r.server)), keyPart(scope), direction, typeof id === "string" ? keyPart(id) : id);
}

/** Where a task's span waits: by its call (`<flow>#<id>`), apart from request keys. */
export function taskKey(call: string): string {
  return JSON.stringify(["task", keyPart(call)]);
}

export function direction(value: unknown): Direction | null {
  return value === "client_to_server" || value === "server_to_client" ? value : null;
}

export function validId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

/** `host:port` or `[v6]:port` as in the records. */
export function splitServer(value: unknown): { address: string; port: number } | null {
  if (typeof value !== "string") return null;
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (!m) return null;
  return { address: (m[1] ?? m[2])!, port: Number(m[3]) };
}

export function timeOf(r: Rec): number {
  const t = typeof r.time === "string" ? Date.parse(r.time) : typeof r.time === "number" ? r.time : NaN;
  return Number.isFinite(t) ? t : Date.now();
}

export function asRecord(v: unknown): Rec | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Rec) : undefined;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function stringOr(s: string, fallback: string): string {
  return s === "" ? fallback : s;
}

export function cut(s: string): string {
  return s.length > MAX_ATTRIBUTE_CHARS ? `${detachedPrefix(s, MAX_ATTRIBUTE_CHARS)}…` : s;
}

export function cutName(s: string): string {
  return s.length > MAX_NAME_CHARS ? `${detachedPrefix(s, MAX_NAME_CHARS)}…` : s;
}

/**
 * The first `chars` characters as a string of their own (ownString): spans and metric attribute sets (kept
 * for the process's life) must not hold the megabytes a peer sent. A surrogate pair is not split.
 */
function detachedPrefix(s: string, chars: number): string {
  const end = /[\uD800-\uDBFF]/.test(s.charAt(chars - 1)) ? chars - 1 : chars;
  return ownString(s.slice(0, end));
}
