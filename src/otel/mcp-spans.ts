/**
 * Records → spans, per the OpenTelemetry MCP semantic conventions: pure functions over the NDJSON record
 * objects of docs/log-format.md, so that a live proxy and `export --otlp` of a saved log produce the same
 * spans. A request record opens a span; its response, error or `unanswered` record closes it; progress
 * notifications become span events. A call made as a task is one span from its request to the task's
 * terminal state (its final result), its polls and status notifications events on it. Nothing here talks to
 * the SDK (see sdk-spans.ts).
 */
import { createHash } from "node:crypto";
import { redactUrlQuery } from "../log/redact.js";
import { ownString } from "../util/own-string.js";
import { methodForMetrics } from "./mcp-methods.js";
import { eventBytes, spanBytes } from "./span-budget.js";
import { opposite, requestKey, type Direction } from "../mcp/correlator.js";
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

type Rec = Record<string, unknown>;
interface Open {
  span: McpSpan;
  decision: Rec | undefined;
  /** What the span and its key hold, estimated (spanBytes). */
  bytes: number;
  /** A task that completed: when (the span ends there once its result comes). */
  completedAt?: number;
}

const DEFAULT_MAX_OPEN = 10_000;
const DEFAULT_MAX_OPEN_BYTES = 32 * 1024 * 1024;
const MAX_EVENTS_PER_SPAN = 128;
/** Attribute strings beyond this are cut: span size stays bounded whatever a peer sends. */
const MAX_ATTRIBUTE_CHARS = 8_192;
/** Identifiers (method, id, session, tool and prompt names, protocol version) are cut shorter. */
const MAX_NAME_CHARS = 256;

/** Pairs requests with what ends them; feed it records in log order. */
export class McpSpanBuilder {
  private readonly open = new Map<string, Open>();
  private readonly maxOpen: number;
  private readonly maxOpenBytes: number;
  private bytes = 0;

  constructor(
    private readonly opts: SpanOptions,
    private readonly emit: (span: McpSpan) => void,
  ) {
    this.maxOpen = opts.maxOpen ?? DEFAULT_MAX_OPEN;
    this.maxOpenBytes = opts.maxOpenBytes ?? DEFAULT_MAX_OPEN_BYTES;
  }

  get openRequests(): number {
    return this.open.size;
  }

  /** Estimated bytes the open requests' spans hold. */
  get openBytes(): number {
    return this.bytes;
  }

  record(r: Rec): void {
    if (r.event === "rpc") this.rpc(r);
    else if (r.event === "stop") this.closeAll(timeOf(r), "proxy stopped");
  }

  /** Ends every open span (at stop, or at the end of an offline log). */
  closeAll(timeMs: number, reason: string): void {
    for (const [key, entry] of this.open) {
      this.forget(key, entry);
      this.finish(entry, timeMs, { type: "unanswered", message: reason }, undefined);
    }
  }

  private forget(key: string, entry: Open): void {
    this.open.delete(key);
    this.bytes -= entry.bytes;
  }

  private rpc(r: Rec): void {
    const kind = r.kind;
    const time = timeOf(r);
    const task = asRecord(r.task);
    if (task && typeof r.call === "string" && task.created !== true && this.open.has(taskKey(r.call))) {
      this.onTask(r, task, time);
      return;
    }
    if (kind === "request" && validId(r.id)) {
      const key = spanKey(r, r.id, direction(r.direction));
      const previous = this.open.get(key);
      if (previous) {
        this.forget(key, previous);
        this.finish(previous, time, { type: "unanswered", message: "id_reused" }, undefined);
      }
      const span = requestSpan(r, time, this.opts);
      const entry: Open = { span, decision: asRecord(r.decision), bytes: spanBytes(span) + key.length };
      const decision = asRecord(r.decision);
      // Enforce mode answered it itself: nothing more will come from the server.
      if (decision?.enforced === true && decision.action === "deny") {
        this.finish(entry, time, { type: "policy_denied", message: stringOr(ruleNames(decision).join(", "), "denied by policy") }, undefined);
        return;
      }
      this.open.set(key, entry);
      this.bytes += entry.bytes;
      this.evictBeyondBounds(time);
      return;
    }
    if ((kind === "response" || kind === "error" || kind === "unanswered") && validId(r.id)) {
      const requestDirection = kind === "unanswered" ? direction(r.direction) : opposite(r.direction);
      const key = spanKey(r, r.id, requestDirection);
      const entry = this.open.get(key);
      if (!entry) return;
      this.forget(key, entry);
      if (kind === "response" && task?.created === true && typeof r.call === "string") {
        // The answer created a task: the call's span goes on until the task ends.
        this.keepForTask(r.call, entry, r, task, time);
        return;
      }
      this.finish(entry, time, endError(r), r);
      return;
    }
    if (kind === "notification" && r.method === "notifications/progress") {
      const related = asRecord(r.related);
      if (!related || !validId(related.id)) return;
      const entry = this.open.get(spanKey(r, related.id, opposite(r.direction)));
      if (!entry || entry.span.events.length >= MAX_EVENTS_PER_SPAN) return;
      const params = asRecord(r.params);
      const attributes: Attributes = {};
      for (const field of ["progress", "total"] as const) if (typeof params?.[field] === "number") attributes[`mcp.progress.${field}`] = params[field];
      if (this.opts.payloads && typeof params?.message === "string") attributes["mcp.progress.message"] = cut(params.message);
      const event = { name: "notifications/progress", timeMs: time, attributes };
      entry.span.events.push(event);
      const added = eventBytes(event);
      entry.bytes += added;
      this.bytes += added;
      this.evictBeyondBounds(time);
    }
  }

  private keepForTask(call: string, entry: Open, r: Rec, task: Rec, time: number): void {
    entry.decision = worst(entry.decision, asRecord(r.decision));
    if (typeof task.id === "string") entry.span.attributes["mcp.task.id"] = cutName(task.id);
    const key = taskKey(call);
    this.open.set(key, entry);
    this.bytes += entry.bytes;
    this.onTask(r, task, time);
  }

  /** A record of a followed task: an event on the call's span; its end or final result ends the span. */
  private onTask(r: Rec, task: Rec, time: number): void {
    const key = taskKey(r.call as string);
    const entry = this.open.get(key)!;
    const end = asRecord(task.end);
    const status = typeof end?.status === "string" ? end.status : undefined;
    if (task.final === true || r.kind === "unanswered" || (status !== undefined && status !== "completed")) {
      this.forget(key, entry);
      const error = r.kind === "unanswered" || task.final === true ? endError(r) : { type: status === "cancelled" ? "cancelled" : "task_failed", message: `the task ended ${status}` };
      this.finish(entry, entry.completedAt ?? time, error, r);
      return;
    }
    if (status === "completed") entry.completedAt = time;
    entry.decision = worst(entry.decision, asRecord(r.decision));
    if (entry.span.events.length >= MAX_EVENTS_PER_SPAN) return;
    const attributes: Attributes = { "mcp.method.name": cutName(String(r.method)) };
    if (typeof task.status === "string") attributes["mcp.task.status"] = cutName(task.status);
    const event = { name: typeof r.method === "string" ? cutName(r.method) : "task", timeMs: time, attributes };
    entry.span.events.push(event);
    const added = eventBytes(event);
    entry.bytes += added;
    this.bytes += added;
    this.evictBeyondBounds(time);
  }

  /** The oldest open requests end as `evicted` while there are too many, or they hold too many bytes. */
  private evictBeyondBounds(time: number): void {
    while (this.open.size > this.maxOpen || (this.bytes > this.maxOpenBytes && this.open.size > 0)) {
      const [oldKey, oldest] = this.open.entries().next().value as [string, Open];
      this.forget(oldKey, oldest);
      this.finish(oldest, time, { type: "unanswered", message: "evicted" }, undefined);
    }
  }

  private finish(entry: Open, endMs: number, error: McpSpan["error"], end: Rec | undefined): void {
    const span = entry.span;
    span.endMs = Math.max(span.startMs, endMs);
    if (error) {
      span.error = error;
      span.attributes["error.type"] = error.type;
      if (/^-?\d+$/.test(error.type)) span.attributes["rpc.response.status_code"] = error.type;
    }
    Object.assign(span.attributes, decisionAttributes(worst(entry.decision, asRecord(end?.decision))));
    if (this.opts.payloads && end?.kind === "response" && end.result !== undefined) span.attributes["gen_ai.tool.call.result"] = cut(JSON.stringify(end.result));
    this.emit(span);
  }
}

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

function requestSpan(r: Rec, time: number, opts: SpanOptions): McpSpan {
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

function endError(r: Rec): McpSpan["error"] {
  if (r.kind === "error") {
    const error = asRecord(r.error);
    const code = typeof error?.code === "number" && Number.isInteger(error.code) ? String(error.code) : "_OTHER";
    return { type: code, message: typeof error?.message === "string" ? cut(error.message) : "JSON-RPC error" };
  }
  if (r.kind === "unanswered") return { type: "unanswered", message: typeof r.reason === "string" ? cut(r.reason) : "unanswered" };
  if (r.isError === true) return { type: "tool_error", message: "the tool reported an error (isError: true)" };
  return null;
}

function decisionAttributes(decision: Rec | undefined): Attributes {
  if (!decision || typeof decision.action !== "string") return {};
  return {
    "mcp_wiretap.decision.action": decision.action,
    "mcp_wiretap.decision.rules": ruleNames(decision),
    "mcp_wiretap.decision.enforced": decision.enforced === true,
  };
}

const SEVERITY: Record<string, number> = { allow: 0, flag: 1, deny: 2 };

/** The more severe of the request's and the answer's decisions, with the rules of both. */
function worst(a: Rec | undefined, b: Rec | undefined): Rec | undefined {
  if (!a || !b) return a ?? b;
  const top = (SEVERITY[String(b.action)] ?? 0) > (SEVERITY[String(a.action)] ?? 0) ? b : a;
  const rules = [...asArray(a.rules), ...asArray(b.rules)];
  return { action: top.action, enforced: a.enforced === true || b.enforced === true, rules };
}

function ruleNames(decision: Rec): string[] {
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
function spanKey(r: Rec, id: RequestId, direction: Direction | null): string {
  const scope = typeof r.session === "string" ? r.session : String(r.flow);
  return requestKey(keyPart(String(r.server)), keyPart(scope), direction, typeof id === "string" ? keyPart(id) : id);
}

/** Where a task's span waits: by its call (`<flow>#<id>`), apart from request keys. */
function taskKey(call: string): string {
  return JSON.stringify(["task", keyPart(call)]);
}

function direction(value: unknown): Direction | null {
  return value === "client_to_server" || value === "server_to_client" ? value : null;
}

function validId(id: unknown): id is string | number {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
}

/** `host:port` or `[v6]:port` as in the records. */
export function splitServer(value: unknown): { address: string; port: number } | null {
  if (typeof value !== "string") return null;
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (!m) return null;
  return { address: (m[1] ?? m[2])!, port: Number(m[3]) };
}

function timeOf(r: Rec): number {
  const t = typeof r.time === "string" ? Date.parse(r.time) : typeof r.time === "number" ? r.time : NaN;
  return Number.isFinite(t) ? t : Date.now();
}

function asRecord(v: unknown): Rec | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Rec) : undefined;
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function stringOr(s: string, fallback: string): string {
  return s === "" ? fallback : s;
}

function cut(s: string): string {
  return s.length > MAX_ATTRIBUTE_CHARS ? `${detachedPrefix(s, MAX_ATTRIBUTE_CHARS)}…` : s;
}

function cutName(s: string): string {
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
