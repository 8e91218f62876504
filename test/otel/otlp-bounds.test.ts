/**
 * OpenTelemetry export bounded whatever a peer sends. A client sending 1 MB methods and 200 kB ids grew the
 * proxy by about 5 MiB a request, kept it (the duration histogram holds its attribute sets for the process's
 * life, `mcp.method.name` among them) and sent every byte to the collector: the span name,
 * `mcp.method.name` and `jsonrpc.request.id` were exported uncut. Now every exported string is cut, the
 * histogram's method is one of the MCP methods or `other`, and the span queue and the open requests are
 * bounded in bytes as well as in count.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OtlpExporter } from "../../src/otel/otlp-exporter.js";
import { durationAttributes, McpSpanBuilder, type McpSpan } from "../../src/otel/mcp-spans.js";
import { startTestProxy } from "../helpers/proxy-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { json, startScriptedUpstream, type ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { wireClient } from "../policy/wire-client.js";
import { startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.js";

/** Identifiers (names, methods, ids) are cut here; free text at 8,192 characters. */
const MAX_NAME = 257;
const MAX_TEXT = 8_193;

const huge = (prefix: string, size: number): string => prefix + "m".repeat(size - prefix.length);

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

function expectBoundedStrings(span: { name: string; attributes: Record<string, unknown> }): void {
  expect(span.name.length).toBeLessThanOrEqual(2 * MAX_NAME + 1);
  for (const key of ["mcp.method.name", "jsonrpc.request.id", "mcp.session.id", "gen_ai.tool.name"]) {
    const value = span.attributes[key];
    if (typeof value === "string") expect(value.length, key).toBeLessThanOrEqual(MAX_NAME);
  }
  for (const [key, value] of Object.entries(span.attributes)) if (typeof value === "string") expect(value.length, key).toBeLessThanOrEqual(MAX_TEXT);
}

describe("a peer sending huge methods and ids, OTLP on, to a real receiver on loopback", () => {
  let up: ScriptedUpstream;
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    process.env.OTEL_METRIC_EXPORT_INTERVAL = "500";
    receiver = await startOtlpReceiver();
    up = await startScriptedUpstream();
    up.route("POST", "/mcp", (req, res) => json(res, { jsonrpc: "2.0", id: (req.json as { id: unknown }).id, result: {} }));
  });
  afterAll(async () => {
    delete process.env.OTEL_METRIC_EXPORT_INTERVAL;
    await receiver?.close();
    await up?.close();
  });

  it("exports spans cut to size, and metrics with the MCP methods then `other`", async () => {
    const proxy = await startTestProxy({ otlp: { endpoint: receiver.url } });
    const client = wireClient(proxy);
    const requests = 10;
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    try {
      for (let i = 0; i < requests; i++) {
        const res = await client.post(`${up.url}/mcp`, { jsonrpc: "2.0", id: huge(`id-${i}-`, 200_000), method: huge(`method-${i}-`, 1_000_000), params: {} });
        expect(res.status).toBe(200);
      }
      expect((await client.post(`${up.url}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} })).status).toBe(200);
      await proxy.waitForRecords((r) => r.event === "rpc" && r.kind === "response", requests + 1, { what: "responses", timeoutMs: 20_000 });
      await waitUntil(() => receiver.spans.length === requests + 1, { what: "the spans exported", timeoutMs: 10_000 });
      gc();
      // 12 MB of methods and ids went by (was: about 4 MiB kept a request, in the record feed and the spans:
      // 40 MiB). The test's own proxy harness keeps every record it read, about 16 MiB of them here, so the
      // bound leaves that room and still catches the old retention.
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(24 * 1024 * 1024);
    } finally {
      await client.close();
      await proxy.stop();
    }
    for (const span of receiver.spans) expectBoundedStrings(span);
    // Each id still tells its span apart: the cut keeps the start.
    expect(new Set(receiver.spans.map((s) => s.attributes["jsonrpc.request.id"])).size).toBe(requests + 1);
    const traceBytes = receiver.requests.filter((r) => r.path === "/v1/traces").reduce((n, r) => n + r.bytes, 0);
    expect(traceBytes).toBeLessThan(requests * 4_096);

    const histogram = receiver.metrics.filter((m) => m.name === "mcp.client.operation.duration").at(-1)!;
    const methods = histogram.histogram!.map((p) => p.attributes["mcp.method.name"]);
    expect(new Set(methods)).toEqual(new Set(["tools/list", "other"]));
    expect(histogram.histogram!.find((p) => p.attributes["mcp.method.name"] === "other")!.count).toBe(requests);
    const metricBytes = receiver.requests.filter((r) => r.path === "/v1/metrics").reduce((n, r) => Math.max(n, r.bytes), 0);
    expect(metricBytes).toBeLessThan(16_384);
  }, 60_000);
});

describe("memory held for export is bounded in bytes", () => {
  it("the span queue, while the collector hangs: spans past its byte budget are dropped and counted", async () => {
    const receiver = await startOtlpReceiver();
    receiver.mode = "hang";
    const maxQueueBytes = 1 << 20;
    const settings = { tracesUrl: `${receiver.url}/v1/traces`, metricsUrl: `${receiver.url}/v1/metrics`, protocol: "http/protobuf" as const, headers: {}, payloads: true, metricIntervalMs: 60_000 };
    const exporter = new OtlpExporter(settings, "test", () => undefined, { maxQueueBytes });
    try {
      const text = "x".repeat(8_000);
      let highest = 0;
      for (let i = 0; i < 1_000; i++) {
        const base = { event: "rpc", server: "127.0.0.1:1", flow: `f${i}`, transport: "streamable-http", time: new Date().toISOString() };
        exporter.record({ ...base, kind: "request", direction: "client_to_server", id: i, method: "tools/call", tool: "t", params: { name: "t", arguments: { text } } });
        exporter.record({ ...base, kind: "response", direction: "server_to_client", id: i, method: "tools/call", result: { text } });
        highest = Math.max(highest, exporter.queue().bytes);
      }
      // 1,000 spans of about 16 kB each: 16 MB without a byte bound, below the count bound (4,096).
      expect(highest).toBeLessThanOrEqual(maxQueueBytes);
      expect(exporter.queue().spans).toBeGreaterThan(0);
      const counts = exporter.counts();
      expect(counts.spans).toBe(1_000);
      expect(counts.dropped).toBe(1_000 - exporter.queue().spans);
    } finally {
      await exporter.stop();
      await receiver.close();
    }
  }, 30_000);

  it("open requests: past their byte budget the oldest end as evicted; ids and methods are cut", () => {
    const spans: McpSpan[] = [];
    const maxOpenBytes = 64 * 1024;
    const builder = new McpSpanBuilder({ payloads: false, maxOpenBytes }, (s) => spans.push(s));
    const longId = "i".repeat(200_000);
    let highest = 0;
    for (let i = 0; i < 200; i++) {
      builder.record({ event: "rpc", kind: "request", direction: "client_to_server", server: "s:1", flow: "f", id: `${longId}${i}`, method: huge(`m${i}-`, 100_000), time: new Date().toISOString() });
      highest = Math.max(highest, builder.openBytes);
    }
    expect(highest).toBeLessThanOrEqual(maxOpenBytes);
    expect(spans.length).toBeGreaterThan(0);
    for (const span of spans) {
      expect(span.error?.message).toBe("evicted");
      expectBoundedStrings(span);
    }
    // Ids that differ past the cut still pair with their own answers.
    builder.record({ event: "rpc", kind: "response", direction: "server_to_client", server: "s:1", flow: "f", id: `${longId}199`, time: new Date().toISOString() });
    expect(spans.at(-1)!.error).toBeNull();
    expect(builder.openRequests).toBe(200 - spans.length);
  });

  it("what metrics keep for the process's life holds no more than the cut names (a cut kept its whole source string alive)", () => {
    const kept: unknown[] = [];
    const builder = new McpSpanBuilder({ payloads: false }, (span) => kept.push(durationAttributes(span)));
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i++) {
      // Parsed from a record line, as the exporter reads them: a string of its own each time.
      const record = JSON.parse(JSON.stringify({ event: "rpc", kind: "request", direction: "client_to_server", server: "s:1", flow: `f${i}`, id: i, method: "tools/call", tool: huge(`tool-${i}-`, 1_000_000), protocolVersion: huge(`v${i}-`, 100_000) })) as Record<string, unknown>;
      builder.record(record);
      builder.record({ event: "rpc", kind: "response", direction: "server_to_client", server: "s:1", flow: `f${i}`, id: i, method: "tools/call" });
    }
    gc();
    expect(kept).toHaveLength(40);
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(8 * 1024 * 1024); // 44 MB of names went by
  });
});

