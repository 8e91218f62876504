/**
 * `mcp-wiretap export --otlp OUT FILE…` (the built CLI) turns a saved log into the same spans the live
 * exporter sent for that traffic, as OTLP/JSON lines.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { runCli, startTestProxy } from "../helpers/proxy-harness.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "./otlp-receiver.js";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** What must agree between live and offline spans: everything but ids and clocks. */
function summary(s: { name: string; kind: number; parentSpanId: string; traceId: string; attributes: Record<string, unknown>; status: { code: number } }): string {
  const a = { ...s.attributes };
  return JSON.stringify([s.name, s.kind, s.parentSpanId, s.parentSpanId ? s.traceId : "", s.status.code, Object.keys(a).sort().map((k) => [k, a[k]])]);
}

function anyValue(v: Obj): unknown {
  return v.stringValue ?? v.boolValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? (v.arrayValue ? (v.arrayValue.values ?? []).map(anyValue) : undefined);
}

describe("export --otlp", () => {
  let upstream: McpUpstream;
  let receiver: OtlpReceiver;
  let dir: string;
  beforeAll(async () => {
    upstream = await startMcpUpstream();
    receiver = await startOtlpReceiver();
    dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-otlp-export-"));
  });
  afterAll(async () => {
    await receiver?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the spans the live exporter sent, and the duration histogram, as OTLP/JSON lines (0600)", async () => {
    const logFile = path.join(dir, "run.ndjson");
    const proxy = await startTestProxy({ logFile, otlp: { endpoint: receiver.url, protocol: "http/json" } });
    const connected = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    try {
      await connected.client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 }, _meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } });
      await expect(connected.client.getPrompt({ name: "missing" })).rejects.toThrow();
    } finally {
      await connected.close();
    }
    await proxy.stop();
    const out = path.join(dir, "spans.otlp.jsonl");
    const result = await runCli(["export", "--otlp", out, logFile]);
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const lines = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Obj);
    const offline = lines
      .flatMap((l) => (l.resourceSpans ?? []) as Obj[])
      .flatMap((rs) => (rs.scopeSpans as Obj[]).flatMap((ss) => ss.spans as Obj[]))
      .map((s) => ({
        name: s.name as string,
        kind: s.kind as number,
        traceId: s.traceId as string,
        parentSpanId: (s.parentSpanId ?? "") as string,
        status: { code: (s.status?.code ?? 0) as number },
        attributes: Object.fromEntries((s.attributes as Obj[]).map((kv) => [kv.key, anyValue(kv.value)])),
      }));
    expect(offline.find((s) => s.name === "tools/call get-sum")?.attributes).toMatchObject({ "client.address": "127.0.0.1", "client.port": expect.any(Number) as unknown });
    expect(offline.map(summary).sort()).toEqual(receiver.spans.map((s: ReceivedSpan) => summary(s)).sort());
    // initialize is answered like any request (its request had no session yet, its answer has one).
    const initialize = offline.find((s) => s.name === "initialize");
    expect(initialize?.attributes["error.type"]).toBeUndefined();
    expect(initialize?.attributes["mcp.session.id"]).toEqual(expect.any(String));
    expect(initialize?.status.code).toBe(0);
    const metrics = lines.flatMap((l) => (l.resourceMetrics ?? []) as Obj[]).flatMap((rm) => (rm.scopeMetrics as Obj[]).flatMap((sm) => sm.metrics as Obj[]));
    expect(metrics.find((m) => m.name === "mcp.client.operation.duration")?.unit).toBe("s");
    // The tail filters select what is exported.
    const filtered = path.join(dir, "get-sum.otlp.jsonl");
    expect((await runCli(["export", "--otlp", filtered, "--tool", "get-sum", logFile])).code).toBe(0);
    const names = readFileSync(filtered, "utf8").trim().split("\n").flatMap((l) => ((JSON.parse(l) as Obj).resourceSpans ?? []) as Obj[])
      .flatMap((rs) => (rs.scopeSpans as Obj[]).flatMap((ss) => (ss.spans as Obj[]).map((sp) => sp.name as string)));
    expect(names).toEqual(["tools/call get-sum"]);
    // Never overwrites a file.
    const again = await runCli(["export", "--otlp", out, logFile]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/cannot write .*EEXIST/);
  }, 60_000);

  it("needs an output: --har, --html or --otlp", async () => {
    const result = await runCli(["export", path.join(dir, "nothing.ndjson")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("export needs --har OUT, --html OUT or --otlp OUT");
  });
});
