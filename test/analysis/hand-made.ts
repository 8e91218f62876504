/**
 * Hand-made logs in the record format of docs/log-format.md, for the cases a clean recorded run lacks:
 * an unanswered call, errors, a multi-round exchange, a drifted tool, a cut audit chain, … Each check
 * condition has a case that must make it fire. Not a test file.
 */
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { LogRecord } from "../helpers/proxy-harness.js";

const SERVER = "127.0.0.1:9443";
const SESSION = "5e551011-0000-4000-8000-000000000001";
const STATELESS = "2026-07-28";
let clock = Date.parse("2026-11-22T10:00:00.000Z");
const tick = (): string => new Date((clock += 10)).toISOString();

export function rpcRecord(over: Partial<LogRecord>): LogRecord {
  return {
    level: "info",
    time: tick(),
    event: "rpc",
    flow: "flow-1",
    transport: "streamable-http",
    server: SERVER,
    path: "/mcp",
    session: SESSION,
    protocolVersion: "2025-11-25",
    direction: "client_to_server",
    kind: "request",
    id: 1,
    method: "tools/call",
    tool: "echo",
    bytes: 100,
    decision: { action: "allow", enforced: false, rules: [] },
    ...over,
  };
}

const answer = (over: Partial<LogRecord>): LogRecord => rpcRecord({ direction: "server_to_client", kind: "response", bytes: 80, latencyMs: 5, ...over });
const start = (): LogRecord => ({ level: "info", time: tick(), event: "start", version: "0.1.0", listen: "127.0.0.1:8080" });
const stop = (over: Partial<LogRecord> = {}): LogRecord => ({ level: "info", time: tick(), event: "stop", reason: "SIGTERM", ...over });

/** A clean exchange: one echo call, answered. */
export function cleanLog(): LogRecord[] {
  return [
    start(),
    rpcRecord({ id: 1, argsHash: "sha256:aa", params: { name: "echo", arguments: { message: "hi" } } }),
    answer({ id: 1, result: { content: [{ type: "text", text: "Echo: hi" }] } }),
    stop(),
  ];
}

/** The stats edge cases: an unanswered call, a JSON-RPC error and an isError result, a two-round call. */
export function handMadeLog(): LogRecord[] {
  return [
    start(),
    ...cleanLog().slice(1, -1),
    rpcRecord({ id: 2, tool: "slow", flow: "flow-2" }),
    rpcRecord({ id: 2, tool: "slow", flow: "flow-2", kind: "unanswered", bytes: 0, latencyMs: 30000, reason: "session ended (deleted)" }),
    rpcRecord({ id: 3, tool: "broken", flow: "flow-3" }),
    answer({ id: 3, tool: "broken", flow: "flow-3", kind: "error", error: { code: -32603, message: "boom" } }),
    rpcRecord({ id: 4, tool: "broken", flow: "flow-4" }),
    answer({ id: 4, tool: "broken", flow: "flow-4", isError: true, result: { content: [{ type: "text", text: "failed" }], isError: true } }),
    ...multiRound(),
    stop(),
  ];
}

/** A 2026-07-28 call that needs input once: round 1 answered input_required, the retry completes it. */
export function multiRound(requestState = "rs-1"): LogRecord[] {
  const base = { session: null, protocolVersion: STATELESS, tool: "ask" };
  const call = "flow-10#n:10";
  return [
    rpcRecord({ ...base, id: 10, flow: "flow-10", bytes: 100, argsHash: "sha256:bb" }),
    answer({ ...base, id: 10, flow: "flow-10", bytes: 80, latencyMs: 3, resultType: "input_required", call, round: 1, result: { resultType: "input_required", inputRequests: {}, requestState: "rs-1" } }),
    rpcRecord({
      ...base,
      id: 11,
      flow: "flow-11",
      bytes: 160,
      argsHash: "sha256:bb",
      call,
      round: 2,
      ...(requestState !== "rs-1" ? { level: "warn", roundProblem: "requestState differs from the one the server issued (tampered?)" } : {}),
      params: { name: "ask", arguments: {}, inputResponses: {}, requestState },
    }),
    answer({ ...base, id: 11, flow: "flow-11", bytes: 70, latencyMs: 9, resultType: "complete", call, round: 2, result: { resultType: "complete", content: [] } }),
  ];
}

const policy = (action: "deny" | "flag", findings?: unknown[]) => ({ action, enforced: false, rules: [{ name: action === "deny" ? "no-delete" : "watch", action, reason: "by test", ...(findings ? { findings } : {}) }] });

/** One log per check condition in which that condition (and, where it says so, only that one) holds. */
export const CASES: Record<string, () => LogRecord[]> = {
  error: () => [start(), rpcRecord({ id: 5 }), answer({ id: 5, kind: "error", error: { code: -32602, message: "bad args" } }), stop()],
  invalid: () => [start(), rpcRecord({ kind: "invalid", id: null, method: null, tool: null, level: "warn", reason: "no method, result or error" }), stop()],
  deny: () => [start(), rpcRecord({ id: 6, tool: "delete-all", level: "warn", decision: policy("deny") }), answer({ id: 6, tool: "delete-all" }), stop()],
  flag: () => [start(), rpcRecord({ id: 7, level: "warn", decision: policy("flag") }), answer({ id: 7 }), stop()],
  pending: () => [start(), rpcRecord({ id: 8, tool: "slow" }), rpcRecord({ id: 8, tool: "slow", kind: "unanswered", bytes: 0, latencyMs: 3, reason: "stream ended without a response" }), stop()],
  mismatch: () => {
    const headers = { "mcp-protocol-version": STATELESS, "content-type": "application/json" };
    return [
      start(),
      rpcRecord({ id: 9, flow: "flow-m1", session: null, protocolVersion: STATELESS, level: "warn", headerMismatch: [{ header: "Mcp-Name", headerValue: "other", bodyValue: "echo" }] }),
      answer({ id: 9, flow: "flow-m1", session: null, protocolVersion: STATELESS }),
      // No Mcp-Method (so no headerMismatch on the record): only the exchange's http record tells.
      rpcRecord({ id: 10, flow: "flow-m2", session: null, protocolVersion: STATELESS }),
      answer({ id: 10, flow: "flow-m2", session: null, protocolVersion: STATELESS }),
      { level: "info", time: tick(), event: "http", flow: "flow-m2", mode: "mitm", server: SERVER, method: "POST", path: "/mcp", status: 200, requestHeaders: headers },
      stop(),
    ];
  },
  drift: () => [
    start(),
    rpcRecord({ id: 11, method: "tools/list", tool: null }),
    answer({ id: 11, method: "tools/list", tool: null, level: "warn", decision: policy("flag", [{ type: "tool_changed", path: "/result/tools/0", detail: 'tool "echo" differs from its pinned definition (rug pull?)' }]) }),
    stop(),
  ],
  "app-changed": () => [
    start(),
    rpcRecord({ id: 13, method: "resources/read", tool: null }),
    answer({ id: 13, method: "resources/read", tool: null, level: "warn", apps: [{ uri: "ui://maps/app.html", sha256: "sha256:00", bytes: 10 }], decision: policy("flag", [{ type: "ui_changed", path: "/result/contents/0", detail: 'app "ui://maps/app.html" (its HTML or _meta.ui) differs from the pinned one' }]) }),
    stop(),
  ],
  deprecated: () => [
    start(),
    rpcRecord({ id: 12, flow: "flow-d", method: "ping", tool: null, session: null, protocolVersion: STATELESS }),
    answer({ id: 12, flow: "flow-d", method: "ping", tool: null, session: null, protocolVersion: STATELESS, result: {} }),
    stop(),
  ],
  incomplete: () => chained([start(), ...cleanLog().slice(1, -1), rpcRecord({ id: 2, method: "ping", tool: null }), answer({ id: 2, method: "ping", tool: null }), stop()], { cut: 2 }),
};

/** The records with `seq` and `prevHash` as --audit-chain writes them (the chain computed here), one line removed with `cut`. */
export function chained(records: LogRecord[], o: { cut?: number } = {}): LogRecord[] {
  let prev = `sha256:${"0".repeat(64)}`;
  const out = records.map((r, seq) => {
    const line = JSON.stringify({ ...r, seq, prevHash: prev });
    prev = `sha256:${createHash("sha256").update(line).digest("hex")}`;
    return JSON.parse(line) as LogRecord;
  });
  if (o.cut !== undefined) out.splice(o.cut, 1);
  return out;
}

const dirs: string[] = [];

/** Writes a log (records as NDJSON, or text as it is) to a fresh temp folder; returns its path. */
export async function writeLog(content: LogRecord[] | string, name = "log.ndjson"): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-hand-made-"));
  dirs.push(dir);
  const file = path.join(dir, name);
  await writeFile(file, typeof content === "string" ? content : content.map((r) => JSON.stringify(r)).join("\n") + "\n", { mode: 0o600 });
  return file;
}

export async function removeLogs(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}
