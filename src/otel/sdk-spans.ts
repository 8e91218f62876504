import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type Context, type Histogram, type Meter, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { durationAttributes, type DecisionCount, type McpSpan } from "./mcp-spans.js";

/** The conventions' buckets for `mcp.*.operation.duration` (seconds). */
export const DURATION_BUCKETS_S = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

const propagator = new W3CTraceContextPropagator();
const carrierGetter = {
  get: (carrier: Record<string, string>, key: string) => carrier[key],
  keys: (carrier: Record<string, string>) => Object.keys(carrier),
};

/** The caller's trace context from `params._meta` (an invalid one is ignored: the span is a root). */
export function parentContext(parent: McpSpan["parent"]): Context {
  if (!parent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, { ...parent }, carrierGetter);
}

/** Replays a finished McpSpan through the SDK, with its recorded start and end times; returns its span id. */
export function emitSpan(tracer: Tracer, span: McpSpan): string {
  const s = tracer.startSpan(span.name, { kind: SpanKind.CLIENT, startTime: span.startMs, attributes: span.attributes }, parentContext(span.parent));
  for (const event of span.events) s.addEvent(event.name, event.attributes, event.timeMs);
  if (span.error) s.setStatus({ code: SpanStatusCode.ERROR, message: span.error.message });
  s.end(span.endMs);
  return s.spanContext().spanId;
}

export interface McpInstruments {
  duration: Histogram;
  /** Counted here and read by the SDK at each collection: no SDK work per message. */
  decisions: Map<string, { action: string; rule: string; count: number }>;
}

/** Distinct (action, rule) pairs counted at most; rule names come from the policy file, so this is generous. */
const MAX_DECISION_SERIES = 2_000;

export function mcpInstruments(meter: Meter): McpInstruments {
  return {
    duration: meter.createHistogram("mcp.client.operation.duration", {
      unit: "s",
      description: "Duration of an MCP request, from the request to its response, error or abandonment, as seen by the proxy.",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
    }),
    decisions: observeDecisions(meter),
  };
}

function observeDecisions(meter: Meter): McpInstruments["decisions"] {
  const counts: McpInstruments["decisions"] = new Map();
  const counter = meter.createObservableCounter("mcp_wiretap.decisions", {
    unit: "{decision}",
    description: "Policy decisions on MCP messages, by action and rule.",
  });
  counter.addCallback((result) => {
    for (const { action, rule, count } of counts.values()) result.observe(count, { "mcp_wiretap.decision.action": action, "mcp_wiretap.decision.rule": rule });
  });
  return counts;
}

export function recordDuration(instruments: McpInstruments, span: McpSpan): void {
  instruments.duration.record((span.endMs - span.startMs) / 1000, durationAttributes(span));
}

export function countDecisions(instruments: McpInstruments, counts: DecisionCount[]): void {
  for (const { action, rule } of counts) {
    const key = `${action}\u0000${rule}`;
    const entry = instruments.decisions.get(key);
    if (entry) entry.count++;
    else if (instruments.decisions.size < MAX_DECISION_SERIES) instruments.decisions.set(key, { action, rule, count: 1 });
    else {
      const other = instruments.decisions.get("\u0000_OTHER");
      if (other) other.count++;
      else instruments.decisions.set("\u0000_OTHER", { action: "_OTHER", rule: "_OTHER", count: 1 });
    }
  }
}
