/**
 * A loopback OTLP/HTTP receiver for the tests: decodes what the exporters send, protobuf (with protobufjs,
 * from the message layout of the OTLP specification in otlp.proto) and JSON, into one shape.
 */
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

const root = protobuf.loadSync(path.join(path.dirname(fileURLToPath(import.meta.url)), "otlp.proto"));
const TraceRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
const MetricsRequest = root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest");

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code: number; message: string };
  resource: Record<string, unknown>;
}

export interface ReceivedMetric {
  name: string;
  unit: string;
  histogram?: { count: number; bounds: number[]; attributes: Record<string, unknown> }[];
  sum?: { value: number; attributes: Record<string, unknown> }[];
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  metrics: ReceivedMetric[];
  requests: { path: string; contentType: string; headers: http.IncomingHttpHeaders; bytes: number }[];
  /** "ok", "503" (answer 503 to everything), "hang" (never answer). */
  mode: "ok" | "503" | "hang";
  close(): Promise<void>;
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function anyValue(v: Obj | undefined): unknown {
  if (!v) return undefined;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("arrayValue" in v) return ((v.arrayValue?.values ?? []) as Obj[]).map(anyValue);
  return undefined;
}

function attrs(list: Obj[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]));
}

function hex(v: unknown): string {
  if (typeof v === "string") return v; // JSON: already hex
  return Buffer.from(v as Uint8Array).toString("hex");
}

function decode(body: Buffer, contentType: string, kind: "traces" | "metrics"): Obj {
  if (contentType.includes("json")) return JSON.parse(body.toString("utf8")) as Obj;
  const type = kind === "traces" ? TraceRequest : MetricsRequest;
  return type.toObject(type.decode(body), { longs: String, enums: Number, bytes: Buffer, defaults: false });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetric[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const hanging = new Set<http.ServerResponse>();
  const receiver: OtlpReceiver = { url: "", spans, metrics, requests, mode: "ok", close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const contentType = String(req.headers["content-type"] ?? "");
      requests.push({ path: req.url ?? "", contentType, headers: req.headers, bytes: chunks.reduce((n, c) => n + c.length, 0) });
      if (receiver.mode === "hang") {
        hanging.add(res);
        return;
      }
      if (receiver.mode === "503") {
        res.writeHead(503).end();
        return;
      }
      const body = Buffer.concat(chunks);
      if (req.url === "/v1/traces") {
        const msg = decode(body, contentType, "traces");
        for (const rs of (msg.resourceSpans ?? []) as Obj[]) {
          const resource = attrs(rs.resource?.attributes);
          for (const ss of (rs.scopeSpans ?? []) as Obj[]) {
            for (const s of (ss.spans ?? []) as Obj[]) {
              spans.push({
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: s.parentSpanId ? hex(s.parentSpanId) : "",
                name: s.name,
                kind: typeof s.kind === "string" ? Number(s.kind) : (s.kind ?? 0),
                startNs: BigInt(s.startTimeUnixNano ?? 0),
                endNs: BigInt(s.endTimeUnixNano ?? 0),
                attributes: attrs(s.attributes),
                events: ((s.events ?? []) as Obj[]).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })),
                status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
                resource,
              });
            }
          }
        }
      } else if (req.url === "/v1/metrics") {
        const msg = decode(body, contentType, "metrics");
        for (const rm of (msg.resourceMetrics ?? []) as Obj[]) {
          for (const sm of (rm.scopeMetrics ?? []) as Obj[]) {
            for (const m of (sm.metrics ?? []) as Obj[]) {
              metrics.push({
                name: m.name,
                unit: m.unit ?? "",
                ...(m.histogram
                  ? { histogram: (m.histogram.dataPoints as Obj[]).map((p) => ({ count: Number(p.count), bounds: (p.explicitBounds ?? []) as number[], attributes: attrs(p.attributes) })) }
                  : {}),
                ...(m.sum ? { sum: (m.sum.dataPoints as Obj[]).map((p) => ({ value: Number(p.asInt ?? p.asDouble ?? 0), attributes: attrs(p.attributes) })) } : {}),
              });
            }
          }
        }
      }
      res.writeHead(200, { "content-type": contentType.includes("json") ? "application/json" : "application/x-protobuf" }).end(contentType.includes("json") ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  receiver.url = `http://127.0.0.1:${port}`;
  receiver.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
