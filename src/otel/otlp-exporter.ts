/**
 * The live exporter: every record the proxy writes is also fed here (`record()`), turned into spans and
 * metrics (mcp-spans.ts) and handed to the official OpenTelemetry SDK, which batches and sends them on its
 * own schedule. Nothing here waits on the collector: a full queue drops spans (counted), a failed export is
 * counted, and `stop()` gives the last flush a bounded time.
 */
import type { SpanExporter, ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { defaultResource, detectResources, envDetector, resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { redactUrlQuery, redactUserinfo } from "../log/redact.js";
import { McpSpanBuilder, decisionCounts } from "./mcp-spans.js";
import { SpanBudget, spanBytes } from "./span-budget.js";
import { countDecisions, emitSpan, mcpInstruments, recordDuration } from "./sdk-spans.js";
import type { OtlpSettings } from "./otlp-config.js";

/** Spans waiting for export at most; beyond, new ones are dropped (and counted). */
const MAX_QUEUE = 4_096;
/** Estimated bytes of the spans waiting for export (or being sent) at most; beyond, new ones are dropped. */
const MAX_QUEUE_BYTES = 16 * 1024 * 1024;
const BATCH = 512;
const BATCH_DELAY_MS = 1_000;
/** A collector that does not answer within this costs one batch, not a stuck exporter. */
const EXPORT_TIMEOUT_MS = 10_000;
/** The final flush at stop waits no longer than this. */
const STOP_FLUSH_MS = 2_000;
const REPORT_EVERY_MS = 10_000;

export interface OtlpCounts {
  spans: number;
  exported: number;
  /** Spans in batches the collector refused or never answered. */
  failed: number;
  /** Spans that never reached an export: the queue was full, or the final flush ran out of time. */
  dropped: number;
}

export interface OtlpWarning {
  event: "otlp_export";
  endpoint: string;
  spans: number;
  exported: number;
  failed: number;
  dropped: number;
  message: string;
}

export function serviceResource(version: string): Resource {
  return defaultResource()
    .merge(resourceFromAttributes({ "service.name": "mcp-wiretap", "service.version": version }))
    .merge(detectResources({ detectors: [envDetector] }));
}

export interface ExporterLimits {
  /** Estimated bytes of spans held for export at most (default 16 MiB). */
  maxQueueBytes?: number;
}

/** Counts what reaches the exporter and how each export ends; releases the spans from the budget. */
class CountingExporter implements SpanExporter {
  handed = 0;
  exported = 0;
  failed = 0;
  constructor(
    private readonly inner: SpanExporter,
    private readonly budget: SpanBudget,
  ) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.handed += spans.length;
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.exported += spans.length;
      else this.failed += spans.length;
      for (const span of spans) this.budget.release(span.spanContext().spanId);
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export class OtlpExporter {
  private readonly tracerProvider: BasicTracerProvider;
  private readonly meterProvider: MeterProvider;
  private readonly builder: McpSpanBuilder;
  private readonly counting: CountingExporter;
  private readonly budget: SpanBudget;
  private spans = 0;
  /** Spans handed to the SDK (the others did not fit the budget). */
  private emitted = 0;
  private lastReport = { at: 0, failed: 0, dropped: 0 };
  private readonly endpoint: string;
  private readonly maxQueue: number;

  constructor(
    settings: OtlpSettings,
    version: string,
    private readonly warn: (w: OtlpWarning) => void,
    limits: ExporterLimits = {},
  ) {
    // The URL may carry credentials (userinfo, a token in the query): never in a record.
    this.maxQueue = envInt("OTEL_BSP_MAX_QUEUE_SIZE") ?? MAX_QUEUE;
    this.budget = new SpanBudget(this.maxQueue, limits.maxQueueBytes ?? MAX_QUEUE_BYTES);
    this.endpoint = settings.tracesUrl ? redactUserinfo(redactUrlQuery(settings.tracesUrl)) : "(from OTEL_EXPORTER_OTLP_* variables)";
    const resource = serviceResource(version);
    const common = { headers: { ...settings.headers }, timeoutMillis: EXPORT_TIMEOUT_MS };
    const json = settings.protocol === "http/json";
    const traceConfig = { ...common, ...(settings.tracesUrl ? { url: settings.tracesUrl } : {}) };
    const metricConfig = { ...common, ...(settings.metricsUrl ? { url: settings.metricsUrl } : {}) };
    this.counting = new CountingExporter(json ? new JsonTraceExporter(traceConfig) : new ProtoTraceExporter(traceConfig), this.budget);
    const metricExporter: PushMetricExporter = json ? new JsonMetricExporter(metricConfig) : new ProtoMetricExporter(metricConfig);
    this.tracerProvider = new BasicTracerProvider({
      resource,
      sampler: new AlwaysOnSampler(),
      spanProcessors: [
        new BatchSpanProcessor(this.counting, {
          maxQueueSize: this.maxQueue,
          maxExportBatchSize: envInt("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") ?? BATCH,
          scheduledDelayMillis: envInt("OTEL_BSP_SCHEDULE_DELAY") ?? BATCH_DELAY_MS,
          exportTimeoutMillis: envInt("OTEL_BSP_EXPORT_TIMEOUT") ?? EXPORT_TIMEOUT_MS,
        }),
      ],
    });
    this.meterProvider = new MeterProvider({
      resource,
      readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: settings.metricIntervalMs, exportTimeoutMillis: Math.min(EXPORT_TIMEOUT_MS, settings.metricIntervalMs) })],
    });
    const tracer = this.tracerProvider.getTracer("mcp-wiretap", version);
    const instruments = mcpInstruments(this.meterProvider.getMeter("mcp-wiretap", version));
    this.builder = new McpSpanBuilder({ payloads: settings.payloads }, (span) => {
      this.spans++;
      recordDuration(instruments, span);
      const bytes = spanBytes(span);
      if (!this.budget.fits(bytes)) return;
      this.emitted++;
      this.budget.hold(emitSpan(tracer, span), bytes);
    });
    this.countDecisions = (r) => countDecisions(instruments, decisionCounts(r));
  }

  private readonly countDecisions: (r: Record<string, unknown>) => void;

  /** One record line from the record stream. Never throws. */
  line(text: string): void {
    if (!makesSpans(text)) return;
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      return;
    }
    if (record !== null && typeof record === "object" && !Array.isArray(record)) this.record(record as Record<string, unknown>);
  }

  /** One record, as written to the log (never modified here). Never throws. */
  record(r: Record<string, unknown>): void {
    try {
      this.builder.record(r);
      this.countDecisions(r);
      this.reportTrouble(false);
    } catch {
      // A span is never worth a lost record or a failed exchange.
    }
  }

  counts(): OtlpCounts {
    const c = this.counting;
    // The budget keeps the processor's queue from ever overflowing: what it did not take was dropped here.
    return { spans: this.spans, exported: c.exported, failed: c.failed, dropped: this.spans - this.emitted };
  }

  /** Spans held for export (queued, or in the batch being sent) and their estimated bytes. */
  queue(): { spans: number; bytes: number } {
    return { spans: this.budget.spans, bytes: this.budget.bytes };
  }

  /** A warning at most every 10 s while spans fail or are dropped, and one at stop if any were. */
  private reportTrouble(final: boolean): void {
    const now = Date.now();
    if (!final && now - this.lastReport.at < REPORT_EVERY_MS) return;
    const c = final ? { ...this.counts(), dropped: Math.max(0, this.spans - this.counting.exported - this.counting.failed) } : this.counts();
    if (c.failed === this.lastReport.failed && c.dropped === this.lastReport.dropped) return;
    this.lastReport = { at: now, failed: c.failed, dropped: c.dropped };
    this.warn({
      event: "otlp_export",
      endpoint: this.endpoint,
      ...c,
      message: `OTLP export to ${this.endpoint}: ${c.failed} span(s) failed, ${c.dropped} dropped of ${c.spans}${final ? " (at stop)" : ""}; the log file is complete`,
    });
  }

  /** Ends open spans, flushes within a bounded time, reports losses. */
  async stop(): Promise<OtlpCounts> {
    this.builder.closeAll(Date.now(), "proxy stopped");
    await withTimeout(Promise.allSettled([this.tracerProvider.shutdown(), this.meterProvider.shutdown()]), STOP_FLUSH_MS);
    this.reportTrouble(true);
    return { ...this.counts(), dropped: Math.max(0, this.spans - this.counting.exported - this.counting.failed) };
  }
}

const EVENT_KEY = '"event":"';

/**
 * Only rpc and policy records make spans and metrics: the rest (http records are the largest) are not parsed.
 * `event` is the first member of every record object (docs/log-format.md), after pino's `level` and `time`,
 * so the first `"event":"` in the line is the record's own: a nested one comes later, and one inside a
 * string is escaped (`\"event\":\"`) and never matches. The parsed record is checked again (`record`).
 */
export function makesSpans(line: string): boolean {
  const at = line.indexOf(EVENT_KEY);
  if (at === -1) return false;
  const value = at + EVENT_KEY.length;
  return line.startsWith('rpc"', value) || line.startsWith('policy"', value);
}

/** The standard OTEL_BSP_* settings, when set to a positive integer. */
function envInt(name: string): number | undefined {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : undefined;
}

function withTimeout(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    p.finally(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
