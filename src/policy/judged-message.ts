import { isIPv6 } from "node:net";
import type { RpcEvent } from "../mcp/rpc-event.js";
import { isPlainObject } from "../util/plain-object.js";

/** What the policy sees of one message. */
export interface JudgedMessage {
  /** host:port of the real destination (IPv6 in brackets) */
  server: string;
  /** host alone, lower case, IPv6 without brackets */
  host: string;
  session: string | null;
  direction: RpcEvent["direction"];
  kind: RpcEvent["kind"];
  method: string | undefined;
  /** A task's final result (tasks/result answer): the method of the call that created the task. */
  callMethod?: string;
  tool: string | undefined;
  /** Of a resources/read answer: the URI its request named (undefined when the answer is tied to no request). */
  readUri?: string;
  /** the whole JSON-RPC message as parsed */
  raw: unknown;
}

export function judgedMessage(e: RpcEvent): JudgedMessage {
  return {
    server: e.server,
    host: hostOf(e.server),
    session: e.session,
    direction: e.direction,
    kind: e.kind,
    method: e.method,
    ...(e.callMethod !== undefined ? { callMethod: e.callMethod } : {}),
    tool: e.tool,
    ...(e.answered?.readUri !== undefined && e.kind === "response" ? { readUri: e.answered.readUri } : {}),
    raw: e.raw,
  };
}

export function hostOf(server: string): string {
  if (server.startsWith("[")) return server.slice(1, server.indexOf("]")).toLowerCase();
  const colon = server.lastIndexOf(":");
  // An unbracketed IPv6 literal has two colons at least (and net.isIPv6 compiles a large pattern on first use).
  const host = colon > 0 && (server.indexOf(":") === colon || !isIPv6(server)) ? server.slice(0, colon) : server;
  return host.toLowerCase();
}

/** `params.arguments` of a tools/call request. */
export function toolArguments(m: JudgedMessage): Record<string, unknown> | undefined {
  const params = (m.raw as { params?: { arguments?: unknown } } | undefined)?.params;
  const args = params?.arguments;
  return isPlainObject(args) ? args : undefined;
}
