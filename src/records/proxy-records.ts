import { redactUrlQuery } from "../log/redact.js";
import type { Logger } from "../log/logger.js";
import type { ProxyEvent } from "../proxy/proxy-events.js";
import { formatHostPort, formatPeer } from "./format.js";

export type { ProxyEvent };


export type RecordLevel = "debug" | "info" | "warn" | "error";

export function proxyRecord(e: ProxyEvent): { level: RecordLevel; record: Record<string, unknown> } {
  switch (e.type) {
    case "refused_connect":
      return {
        level: "warn",
        record: {
          event: "refused",
          stage: "connect",
          client: formatPeer(e.client),
          ...(e.target !== undefined ? { target: e.target } : {}),
          ...(e.server ? { server: formatHostPort(e.server.host, e.server.port) } : {}),
          status: e.status,
          reason: e.reason,
        },
      };
    case "refused_request":
      return {
        level: "warn",
        record: {
          event: "refused",
          stage: "request",
          client: formatPeer(e.client),
          ...(e.server !== undefined ? { server: e.server ? formatHostPort(e.server.host, e.server.port) : null } : {}),
          ...(e.method !== undefined ? { method: e.method } : {}),
          ...(e.host !== undefined ? { host: e.host } : {}),
          status: e.status,
          reason: e.reason,
        },
      };
    case "malformed_request":
      return {
        level: "warn",
        record: {
          event: "refused",
          stage: e.connect ? "connect" : "request",
          client: formatPeer(e.client),
          ...(e.connect ? { target: e.target } : { requestLine: e.requestLine }),
          ...(e.server ? { server: formatHostPort(e.server.host, e.server.port) } : {}),
          status: 400,
          reason: e.reason,
        },
      };
    case "client_tls_error":
      return {
        level: "warn",
        record: {
          event: "client_tls_error",
          tunnel: e.tunnel,
          server: formatHostPort(e.server.host, e.server.port),
          client: formatPeer(e.client),
          err: e.err,
          hint: "the client may not trust the mcp-wiretap CA: see `mcp-wiretap ca path`",
        },
      };
    case "tunnel":
      return {
        level: "info",
        record: {
          event: "tunnel",
          mode: "passthrough",
          tunnel: e.tunnel,
          client: formatPeer(e.client),
          server: formatHostPort(e.server.host, e.server.port),
          bytesUp: e.bytesUp,
          bytesDown: e.bytesDown,
          durationMs: e.durationMs,
          ...(e.error ? { error: e.error } : {}),
        },
      };
    case "websocket":
      return {
        level: "info",
        record: {
          event: "websocket",
          flow: e.flow,
          client: formatPeer(e.client),
          server: formatHostPort(e.server.host, e.server.port),
          path: redactUrlQuery(e.path),
          status: e.status,
          bytesUp: e.bytesUp,
          bytesDown: e.bytesDown,
          durationMs: e.durationMs,
          ...(e.error ? { error: e.error } : {}),
        },
      };
    case "addon_error":
      return { level: "error", record: { event: "addon_error", addon: e.addon, hook: e.hook, ...(e.flow !== undefined ? { flow: e.flow } : {}), err: e.err } };
    case "engine_error":
      return { level: "debug", record: { event: "engine_error", kind: e.kind, err: e.err } };
  }
}

/** Writes each event the proxy reports as its record (what `ProxyServer`'s `report` option is given). */
export function recordProxyEvents(log: Logger): (e: ProxyEvent) => void {
  return (e) => {
    const { level, record } = proxyRecord(e);
    log[level](record);
  };
}
