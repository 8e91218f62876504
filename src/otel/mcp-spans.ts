/**
 * Records → spans, per the OpenTelemetry MCP semantic conventions: pure functions over the NDJSON record
 * objects of docs/log-format.md, so that a live proxy and `export --otlp` of a saved log produce the same
 * spans. A request record opens a span; its response, error or `unanswered` record closes it; progress
 * notifications become span events. A call made as a task is one span from its request to the task's
 * terminal state (its final result), its polls and status notifications events on it. Nothing here talks to
 * the SDK (see sdk-spans.ts).
 */
import { eventBytes, spanBytes } from "./span-budget.js";
import { opposite, type Direction } from "../mcp/correlator.js";
import type { RequestId } from "../mcp/jsonrpc.js";
import {
  asRecord, cut, cutName, decisionAttributes, direction, endError, requestSpan, ruleNames, spanKey, stringOr, taskKey, timeOf, validId, worst,
  type Attributes, type McpSpan, type Rec, type SpanOptions,
} from "./span-fields.js";

export { decisionCounts, durationAttributes, splitServer, type Attributes, type DecisionCount, type McpSpan, type SpanOptions } from "./span-fields.js";

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
      const found = this.openRequestOf(r, r.id, requestDirection);
      if (!found) return;
      const [key, entry] = found;
      this.forget(key, entry);
      if (typeof r.session === "string" && entry.span.attributes["mcp.session.id"] === undefined) entry.span.attributes["mcp.session.id"] = cutName(r.session);
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

  /**
   * The open request an answer ends: by session, or else by the exchange both travelled in. A request sent
   * before its session existed (initialize, whose answer brings the session id) was keyed by its exchange.
   */
  private openRequestOf(r: Rec, id: RequestId, requestDirection: Direction | null): [string, Open] | null {
    const key = spanKey(r, id, requestDirection);
    const entry = this.open.get(key);
    if (entry) return [key, entry];
    if (typeof r.session !== "string" || typeof r.flow !== "string") return null;
    const byFlow = spanKey({ ...r, session: null }, id, requestDirection);
    const sessionless = this.open.get(byFlow);
    return sessionless ? [byFlow, sessionless] : null;
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
