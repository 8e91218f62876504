/**
 * `mcp-wiretap export --otlp OUT [FILE…]`: a saved log replayed through the same conversion as the live
 * exporter (mcp-spans.ts) and the SDK, written as OTLP/JSON lines (one ExportTraceServiceRequest per
 * batch of spans, then one ExportMetricsServiceRequest): the format of the Collector's `otlpjsonfile`
 * receiver and `file` exporter.
 */
import { writeFile } from "node:fs/promises";
import { AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { AggregationTemporality, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
// Serializers of the official SDK: the same code the OTLP/HTTP exporters send with.
import { JsonMetricsSerializer, JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { McpSpanBuilder, decisionCounts } from "./mcp-spans.js";
import { countDecisions, emitSpan, mcpInstruments, recordDuration } from "./sdk-spans.js";
import { serviceResource } from "./otlp-exporter.js";
import { parseRecord } from "../saved-logs/parse-record.js";
import { escapeLine } from "../log/escape-line.js";
import { FileReadError, inputLines } from "../saved-logs/follow.js";

const SPANS_PER_LINE = 1_000;

class CollectOnce extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface OtlpExportOptions {
  otlp: string;
  otlpPayloads?: boolean;
  /** The `tail` filters (--server, --tool, …): records that fail it are left out. */
  filter?: (record: Record<string, unknown>) => boolean;
}

type Io = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; stdin: NodeJS.ReadableStream };

/** Resolves with the exit code. */
export async function exportOtlpCommand(files: string[], o: OtlpExportOptions, version: string, io: Io = process): Promise<number> {
  const resource = serviceResource(version);
  const memory = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ resource, sampler: new AlwaysOnSampler(), spanProcessors: [new SimpleSpanProcessor(memory)] });
  const reader = new CollectOnce();
  const meterProvider = new MeterProvider({ resource, readers: [reader] });
  const tracer = tracerProvider.getTracer("mcp-wiretap", version);
  const instruments = mcpInstruments(meterProvider.getMeter("mcp-wiretap", version));
  const builder = new McpSpanBuilder({ payloads: o.otlpPayloads ?? false }, (span) => {
    emitSpan(tracer, span);
    recordDuration(instruments, span);
  });
  let skipped = 0;
  let lastTime = 0;
  try {
    for (const file of files.length > 0 ? files : ["-"]) {
      for await (const line of inputLines(file, io.stdin)) {
        if (line.trim() === "") continue;
        const record = parseRecord(line);
        if (!record) {
          skipped++;
          continue;
        }
        if (o.filter && record.event === "rpc" && !o.filter(record)) continue;
        const t = typeof record.time === "string" ? Date.parse(record.time) : NaN;
        if (Number.isFinite(t)) lastTime = t;
        builder.record(record);
        countDecisions(instruments, decisionCounts(record));
      }
      // Requests still open when a file (a run) ends were never answered in it.
      builder.closeAll(lastTime || Date.now(), "log ended before the response");
    }
  } catch (err) {
    if (err instanceof FileReadError) {
      io.stderr.write(`mcp-wiretap: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const spans = memory.getFinishedSpans();
  const decoder = new TextDecoder();
  const lines: string[] = [];
  for (let i = 0; i < spans.length; i += SPANS_PER_LINE) {
    lines.push(decoder.decode(JsonTraceSerializer.serializeRequest(spans.slice(i, i + SPANS_PER_LINE))));
  }
  const { resourceMetrics } = await reader.collect();
  if (resourceMetrics.scopeMetrics.some((s) => s.metrics.length > 0)) lines.push(decoder.decode(JsonMetricsSerializer.serializeRequest(resourceMetrics)));
  await Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
  // Format controls from record strings written `\uXXXX`, as the log writes them.
  const text = lines.map((l) => `${escapeLine(l)}\n`).join("");
  if (o.otlp === "-") {
    io.stdout.write(text);
    return 0;
  }
  try {
    await writeFile(o.otlp, text, { mode: 0o600, flag: "wx" });
  } catch (err) {
    io.stderr.write(`mcp-wiretap: cannot write ${o.otlp}: ${(err as Error).message}\n`);
    return 1;
  }
  io.stderr.write(`mcp-wiretap: wrote ${spans.length} span(s) to ${o.otlp}${skipped > 0 ? ` (${skipped} line(s) that are not JSON records skipped)` : ""}\n`);
  return 0;
}
