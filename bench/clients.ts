/** undici dispatchers for a path: keep-alive, HTTP/1.1 on every leg, bounded timeouts. */
import { Agent, ProxyAgent, type Dispatcher } from "undici";
import type { RunningPath } from "./paths.ts";

export interface DispatcherOptions {
  /** Max connections per origin (default: unlimited). */
  connections?: number;
  /** 0 disables the idle-body timeout (long-lived SSE streams). */
  bodyTimeoutMs?: number;
  /** 0 disables the wait-for-headers timeout (a proxy that holds SSE headers back). */
  headersTimeoutMs?: number;
}

export function dispatcherFor(path: RunningPath, opts: DispatcherOptions = {}): Dispatcher {
  const common = {
    allowH2: false,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: opts.headersTimeoutMs ?? 15_000,
    bodyTimeout: opts.bodyTimeoutMs ?? 15_000,
    connectTimeout: 10_000,
    ...(opts.connections ? { connections: opts.connections } : {}),
  };
  if (!path.proxy) return new Agent({ ...common, connect: { ca: path.clientCaPem } });
  return new ProxyAgent({ ...common, uri: `http://${path.proxy.host}:${path.proxy.port}`, requestTls: { ca: path.clientCaPem } });
}

export const MCP_HEADERS = {
  "content-type": "application/json",
  "mcp-protocol-version": "2025-06-18",
} as const;

export function toolsCall(id: number | string, tool = "echo"): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: { text: "hello from the bench" } } });
}

/** A `tools/call` that asks the upstream to stream `progress` notifications (token = the id) before its result. */
export function toolsCallWithProgress(id: string, progress: number): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "long-task", arguments: { progress }, _meta: { progressToken: id } },
  });
}
