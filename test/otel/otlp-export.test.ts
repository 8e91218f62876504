/**
 * The official SDK client's calls through the proxy, exported with the official OpenTelemetry SDK to a
 * loopback OTLP/HTTP receiver: spans named and attributed per the MCP conventions, the caller's trace as
 * parent, an error span, progress events, the duration histogram; and a collector that hangs or answers 503
 * changes nothing for traffic or the log file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy, type LogRecord } from "../helpers/proxy-harness.js";
import { startOtlpReceiver, type OtlpReceiver } from "./otlp-receiver.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

let upstream: McpUpstream;
beforeAll(async () => {
  upstream = await startMcpUpstream();
  process.env.OTEL_METRIC_EXPORT_INTERVAL = "500";
});
afterAll(async () => {
  delete process.env.OTEL_METRIC_EXPORT_INTERVAL;
  await upstream?.close();
});

async function runCalls(proxyUrl: string, caPem: string, withProgress: boolean): Promise<void> {
  const connected = await connectStreamable(upstream.streamableUrl, { proxyUrl, caPem, clientName: "otel-test" });
  try {
    await connected.client.callTool({ name: "echo", arguments: { message: "hi" }, _meta: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: "vendor=abc" } });
    await expect(connected.client.getPrompt({ name: "no-such-prompt" })).rejects.toThrow();
    if (withProgress) {
      await connected.client.callTool({ name: "trigger-long-running-operation", arguments: { steps: 2, duration: 0.4 } }, undefined, { onprogress: () => undefined, timeout: 10_000 });
    }
  } finally {
    await connected.close();
  }
}

describe("OTLP export through the official SDK", () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  afterAll(async () => receiver?.close());

  it("sends one CLIENT span per request over http/protobuf, named and attributed per the MCP conventions, and the duration histogram", async () => {
    const proxy = await startTestProxy({ payloads: "full", otlp: { endpoint: receiver.url, headers: ["x-collector-key=k1"] } });
    await runCalls(proxy.url, proxy.caPem, true);
    const records = await proxy.stop();
    expect(receiver.requests.some((r) => r.path === "/v1/traces" && r.contentType === "application/x-protobuf" && r.headers["x-collector-key"] === "k1")).toBe(true);

    const echo = receiver.spans.find((s) => s.name === "tools/call echo");
    expect(echo, JSON.stringify(receiver.spans.map((s) => s.name))).toBeDefined();
    const server = upstream.url.replace("https://", "");
    const request = records.find((r) => r.event === "rpc" && r.kind === "request" && r.tool === "echo")!;
    expect(request).toMatchObject({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: "vendor=abc" });
    // The client as its exchange's http record names it.
    expect(request.client).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(records.find((r) => r.event === "http" && r.flow === request.flow)?.client).toBe(request.client);
    expect(echo).toMatchObject({
      kind: 3, // SPAN_KIND_CLIENT
      traceId: TRACE_ID,
      parentSpanId: PARENT_ID,
      status: { code: 0 },
      resource: expect.objectContaining({ "service.name": "mcp-wiretap" }) as unknown,
    });
    expect(echo!.attributes).toMatchObject({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "echo",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": String(request.id),
      "mcp.session.id": request.session,
      "mcp.protocol.version": request.protocolVersion,
      "server.address": "127.0.0.1",
      "server.port": Number(server.split(":")[1]),
      "network.transport": "tcp",
      "client.address": "127.0.0.1",
      "client.port": Number(String(request.client).split(":")[1]),
      "mcp_wiretap.decision.action": "allow",
      "mcp_wiretap.decision.enforced": false,
    });
    // Payload values stay out without --otlp-payloads, even though the log has them in full.
    expect(echo!.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(echo!.endNs).toBeGreaterThanOrEqual(echo!.startNs);

    const failed = receiver.spans.find((s) => s.name === "prompts/get no-such-prompt");
    const errorRecord = records.find((r) => r.event === "rpc" && r.kind === "error" && r.method === "prompts/get") as LogRecord & { error: { code: number; message: string } };
    expect(failed).toMatchObject({ status: { code: 2, message: errorRecord.error.message }, attributes: expect.objectContaining({ "error.type": String(errorRecord.error.code), "gen_ai.prompt.name": "no-such-prompt" }) as unknown });
    // Without a traceparent the span starts a trace of its own.
    expect(failed!.parentSpanId).toBe("");
    expect(failed!.traceId).not.toBe(TRACE_ID);

    const long = receiver.spans.find((s) => s.name === "tools/call trigger-long-running-operation")!;
    expect(long.events.filter((e) => e.name === "notifications/progress").length).toBeGreaterThanOrEqual(1);
    const requests = records.filter((r) => r.event === "rpc" && r.kind === "request");
    expect(new Set(receiver.spans.map((s) => s.attributes["jsonrpc.request.id"])).size).toBe(requests.length);

    const histogram = receiver.metrics.filter((m) => m.name === "mcp.client.operation.duration").at(-1)!;
    expect(histogram.unit).toBe("s");
    const echoPoint = histogram.histogram!.find((p) => p.attributes["gen_ai.tool.name"] === "echo")!;
    expect(echoPoint.count).toBe(1);
    expect(echoPoint.bounds).toEqual([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]);
    const errorPoint = histogram.histogram!.find((p) => p.attributes["mcp.method.name"] === "prompts/get")!;
    expect(errorPoint.attributes["error.type"]).toBe(String(errorRecord.error.code));
    const decisions = receiver.metrics.filter((m) => m.name === "mcp_wiretap.decisions").at(-1)!;
    const allowed = decisions.sum!.find((p) => p.attributes["mcp_wiretap.decision.action"] === "allow")!;
    expect(allowed.value).toBe(records.filter((r) => r.event === "rpc" && (r.decision as { action?: string } | undefined)?.action === "allow").length);
  }, 60_000);

  it("takes the standard OTEL_* variables (endpoint, protocol http/json, headers, service and resource), and puts redacted payloads on spans only with --otlp-payloads", async () => {
    receiver.spans.length = 0;
    receiver.requests.length = 0;
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_HEADERS: "x-env-key=e1",
      OTEL_SERVICE_NAME: "wiretap-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test",
    };
    Object.assign(process.env, env);
    let proxy;
    try {
      proxy = await startTestProxy({ payloads: "full", otlp: { payloads: true } });
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
    }
    const connected = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    try {
      await connected.client.callTool({ name: "echo", arguments: { message: "hello", password: "hunter22" } });
    } finally {
      await connected.close();
    }
    await proxy.stop();
    const traces = receiver.requests.filter((r) => r.path === "/v1/traces");
    expect(traces.length).toBeGreaterThan(0);
    for (const r of traces) expect(r).toMatchObject({ contentType: expect.stringMatching(/^application\/json/) as unknown, headers: expect.objectContaining({ "x-env-key": "e1" }) as unknown });
    const echo = receiver.spans.find((s) => s.name === "tools/call echo")!;
    expect(echo.resource).toMatchObject({ "service.name": "wiretap-eu", "deployment.environment.name": "test" });
    expect(JSON.parse(echo.attributes["gen_ai.tool.call.arguments"] as string)).toEqual({ message: "hello", password: "[redacted]" });
    expect(echo.attributes["gen_ai.tool.call.result"]).toContain("hello");
  }, 60_000);
});

describe("a collector that is down or slow", () => {
  for (const mode of ["hang", "503"] as const) {
    it(`(${mode}) costs traffic nothing and the log file no record; the loss is reported`, async () => {
      const receiver = await startOtlpReceiver();
      receiver.mode = mode;
      try {
        const proxy = await startTestProxy({ payloads: "full", otlp: { endpoint: receiver.url } });
        const started = Date.now();
        await runCalls(proxy.url, proxy.caPem, false);
        const callsMs = Date.now() - started;
        const stopStarted = Date.now();
        const records = await proxy.stop();
        // The final flush is bounded (2 s); the calls themselves never waited on the collector.
        expect(Date.now() - stopStarted).toBeLessThan(8_000);
        expect(callsMs).toBeLessThan(15_000);
        const rpcs = records.filter((r) => r.event === "rpc");
        const requests = rpcs.filter((r) => r.kind === "request");
        for (const req of requests) expect(rpcs.some((r) => r.id === req.id && r.kind !== "request" && r.direction !== req.direction)).toBe(true);
        expect(records.at(-1)).toMatchObject({ event: "stop" });
        const report = records.find((r) => r.event === "otlp_export");
        expect(report, "a warning says spans were lost").toMatchObject({ level: "warn", spans: requests.length });
        expect((report!.failed as number) + (report!.dropped as number)).toBe(requests.length);
        expectRecordsMatchSchemas(records, "start", "otlp_export", "rpc", "stop");
        expect(receiver.spans).toHaveLength(0);
      } finally {
        await receiver.close();
      }
    }, 60_000);
  }
});
