import { UsageError } from "../util/usage-error.js";

export type OtlpProtocol = "http/protobuf" | "http/json";
export const OTLP_PROTOCOLS: readonly OtlpProtocol[] = ["http/protobuf", "http/json"];

export interface OtlpOptions {
  /** Base URL (`/v1/traces` and `/v1/metrics` are appended), as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint?: string;
  protocol?: string;
  /** `K=V`, repeatable. */
  headers?: string[];
  /** Put redacted payloads on spans (`gen_ai.tool.call.arguments`, `.result`). */
  payloads?: boolean;
}

export interface OtlpSettings {
  /** Undefined: the SDK takes the endpoint from OTEL_EXPORTER_OTLP_(TRACES_|METRICS_)ENDPOINT. */
  tracesUrl: string | undefined;
  metricsUrl: string | undefined;
  protocol: OtlpProtocol;
  /** Merged by the SDK with OTEL_EXPORTER_OTLP_HEADERS (these win). */
  headers: Record<string, string>;
  payloads: boolean;
  metricIntervalMs: number;
}

/** The exporter's settings, or null when no endpoint is set anywhere (OTLP export off). */
export function otlpSettings(opts: OtlpOptions, env: NodeJS.ProcessEnv = process.env): OtlpSettings | null {
  const endpoint = opts.endpoint ?? nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const signalEndpoints = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT);
  if (endpoint === undefined && signalEndpoints === undefined) return null;
  const protocol = opts.protocol ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf";
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new UsageError(`OTLP protocol ${JSON.stringify(protocol)} is not supported: use http/protobuf or http/json`);
  }
  let base: string | undefined;
  if (opts.endpoint !== undefined) {
    let url: URL;
    try {
      url = new URL(opts.endpoint);
    } catch {
      throw new UsageError(`--otlp-endpoint ${JSON.stringify(opts.endpoint)} is not a URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError("--otlp-endpoint must be an http:// or https:// URL");
    base = opts.endpoint.replace(/\/+$/, "");
  }
  const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL);
  return {
    tracesUrl: base === undefined ? undefined : `${base}/v1/traces`,
    metricsUrl: base === undefined ? undefined : `${base}/v1/metrics`,
    protocol: protocol as OtlpProtocol,
    headers: parseHeaders(opts.headers ?? []),
    payloads: opts.payloads ?? false,
    metricIntervalMs: Number.isInteger(interval) && interval > 0 ? interval : 60_000,
  };
}

function parseHeaders(pairs: string[]): Record<string, string> {
  // A null-prototype object: a header named "__proto__" stays a header.
  const headers = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    if (eq <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`--otlp-header ${JSON.stringify(pair.slice(0, 40))}: expected NAME=VALUE`);
    const value = pair.slice(eq + 1).trim();
    if (/[\r\n\0]/.test(value)) throw new UsageError(`--otlp-header ${name}: the value has a control character`);
    headers[name] = value;
  }
  return headers;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}
