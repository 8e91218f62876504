/**
 * Shared bits for the policy tests (not a test file): temp policy files, hand-built RpcEvents as the
 * tracker would hand them to the policy, and a fake clock.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { classifyMessage, toolName } from "../../src/mcp/jsonrpc.js";
import type { RpcEvent } from "../../src/mcp/rpc-event.js";
import { createPolicy } from "../../src/policy/create-policy.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import type { PinStore } from "../../src/policy/pin-store.js";
import type { Policy, PolicyWarn } from "../../src/policy/policy.js";

/** A temp folder, removed by `cleanup()`. */
export function tempDir(prefix = "mcp-wiretap-policy-test-"): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes `text` to `dir/name` and returns the path. */
export function writePolicyFile(dir: string, text: string, name = "policy.yaml"): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** A policy from YAML text, with no pin store unless given. */
export function policyFrom(yaml: string, deps: { pins?: PinStore | null; now?: () => number; warn?: PolicyWarn } = {}): Policy {
  return createPolicy(parsePolicy(yaml, "test.yaml"), { pins: deps.pins ?? null, ...(deps.now ? { now: deps.now } : {}), ...(deps.warn ? { warn: deps.warn } : {}) });
}

export interface EventOptions {
  server?: string;
  session?: string | null;
  direction?: RpcEvent["direction"];
  /** For responses: the method of the request answered (the tracker fills it from correlation). */
  method?: string;
  tool?: string;
}

/** An RpcEvent for `raw`, classified as the tracker would. */
export function rpcEvent(raw: unknown, opts: EventOptions = {}): RpcEvent {
  const msg = classifyMessage(raw);
  const answer = msg.kind === "response" || msg.kind === "error";
  const e: RpcEvent = {
    flow: "test",
    transport: "streamable-http",
    server: opts.server ?? "mcp.example.com:443",
    path: "/mcp",
    session: opts.session === undefined ? "s1" : opts.session,
    protocolVersion: "2025-06-18",
    direction: opts.direction ?? (answer ? "server_to_client" : "client_to_server"),
    kind: msg.kind,
    bytes: Buffer.byteLength(JSON.stringify(raw)),
    raw,
    message: msg,
  };
  if (msg.kind === "request" || msg.kind === "notification") e.method = msg.method;
  else if (opts.method !== undefined) e.method = opts.method;
  if (msg.kind === "request" || msg.kind === "response" || msg.kind === "error") e.id = msg.id;
  const tool = opts.tool ?? toolName(msg);
  if (tool !== undefined) e.tool = tool;
  return e;
}

let nextId = 1;

export function request(method: string, params?: Record<string, unknown>, opts: EventOptions = {}): RpcEvent {
  return rpcEvent({ jsonrpc: "2.0", id: nextId++, method, ...(params ? { params } : {}) }, opts);
}

export function toolCall(name: string, args: Record<string, unknown> = {}, opts: EventOptions = {}): RpcEvent {
  return request("tools/call", { name, arguments: args }, opts);
}

export function notification(method: string, params?: Record<string, unknown>, opts: EventOptions = {}): RpcEvent {
  return rpcEvent({ jsonrpc: "2.0", method, ...(params ? { params } : {}) }, opts);
}

/** A response to a request of `method` (server → client unless told). */
export function response(method: string, result: Record<string, unknown>, opts: EventOptions = {}): RpcEvent {
  return rpcEvent({ jsonrpc: "2.0", id: nextId++, result }, { ...opts, method });
}

export function toolsListResponse(tools: Record<string, unknown>[], opts: EventOptions = {}): RpcEvent {
  return response("tools/list", { tools }, opts);
}

/** A clock the test moves by hand. */
export function fakeClock(start = Date.parse("2026-01-01T00:00:00Z")): { now: () => number; advance(ms: number): void; set(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
    set(ms) {
      t = ms;
    },
  };
}

/** Rule names of a decision, in order. */
export function firing(d: { rules: { name: string }[] }): string[] {
  return d.rules.map((r) => r.name);
}

/**
 * Runs a CLI command function in this process (what the `mcp-wiretap` action calls) and returns what it
 * printed on stdout. Spawning the built CLI costs a Node start per call; the tests spawn it only where
 * the exit code and process output matter.
 */
export function captureStdout(run: () => void): string {
  let out = "";
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    out += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
    return true;
  }) as typeof process.stdout.write;
  try {
    run();
  } finally {
    process.stdout.write = write;
  }
  return out;
}
