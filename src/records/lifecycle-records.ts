import { redactText } from "../log/redact.js";
import type { StartRecord, StdioStartRecord, StopRecord } from "./schemas.js";

/** What a builder returns: the record without what pino adds (`level`, `time`). */
type Body<T> = Omit<T, "level" | "time" | "msg" | "seq" | "prevHash" | "mac">;

/** `start` of the proxy. */
export function proxyStartRecord(f: Omit<Body<StartRecord>, "event">): Body<StartRecord> {
  return { event: "start", ...f };
}

/** `start` of a stdio launch. */
export function stdioStartRecord(f: Omit<Body<StdioStartRecord>, "event" | "transport">): Body<StdioStartRecord> {
  const { version, ...rest } = f;
  return { event: "start", version, transport: "stdio", ...rest };
}

/** `stop`, with the records that could not be written (absent when none). */
export function stopRecord(f: { reason: string; droppedRecords: number; server?: string; session?: string; exitCode?: number }): Body<StopRecord> {
  const { reason, droppedRecords, server, session, exitCode } = f;
  return {
    event: "stop",
    ...(server !== undefined ? { server } : {}),
    ...(session !== undefined ? { session } : {}),
    reason,
    ...(exitCode !== undefined ? { exitCode } : {}),
    ...(droppedRecords > 0 ? { droppedRecords } : {}),
  };
}

/** `policy`: a CONNECT target a rule denies (docs/log-format.md). */
export function connectPolicyRecord(server: string, enforcing: boolean, rule: string, reason: string): Record<string, unknown> {
  return { event: "policy", stage: "connect", server, decision: { action: "deny", enforced: enforcing, rules: [{ name: rule, reason }] } };
}

export function caWarningRecord(message: string): Record<string, unknown> {
  return { event: "ca_warning", message };
}

export function insecureUpstreamRecord(): Record<string, unknown> {
  return { event: "insecure_upstream", message: "upstream certificates are NOT verified (--insecure-upstream)" };
}

/** `addon_error` of a stdio line a stage failed on. */
export function stdioLineErrorRecord(server: string, session: string, direction: string, err: unknown): Record<string, unknown> {
  return { event: "addon_error", addon: "stdio", hook: "line", server, session, direction, err: redactText(err instanceof Error ? `${err.name}: ${err.message}` : String(err)) };
}

/** `addon_error` of a message whose record, written once it was judged, failed (its judgement waited for shared state). */
export function recordErrorRecord(flow: string, err: unknown): Record<string, unknown> {
  return { event: "addon_error", addon: "mcp", hook: "record", flow, err: redactText(err instanceof Error ? `${err.name}: ${err.message}` : String(err)) };
}

/** `spawn_error`: the command is already redacted by the caller (as a `stderr` line is). */
export function spawnErrorRecord(server: string, command: string, code: string, what: string): Record<string, unknown> {
  return { event: "spawn_error", server, command, code, message: `${command}: ${what}` };
}

/** `stderr` of a stdio launch: one line (already redacted), or only the count of lines suppressed. */
export function stderrRecord(
  launch: { server: string; session: string },
  f: { line?: string; bytes?: number; truncated?: boolean; suppressedLines: number },
): Record<string, unknown> {
  return {
    event: "stderr",
    ...launch,
    ...(f.line !== undefined ? { line: f.line, bytes: f.bytes } : {}),
    ...(f.truncated ? { truncated: true } : {}),
    ...(f.suppressedLines > 0 ? { suppressedLines: f.suppressedLines } : {}),
  };
}
