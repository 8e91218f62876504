/** The replay's inputs that are not the capture: credentials (`--header`) and where its records go. */
import { UsageError } from "../util/usage-error.js";
import type { LogRecord } from "../saved-logs/filters.js";

/** Headers the replay sets itself: given with --header they would contradict the message or the session. */
const OWN_HEADERS = new Set(["host", "content-length", "content-type", "transfer-encoding", "connection", "accept", "mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name"]);

/** `--header 'Name: value'` → `{ name: value }`; the value is never said back (it is a credential). */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const text of values) {
    const colon = text.indexOf(":");
    const name = colon > 0 ? text.slice(0, colon).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError("--header: expected 'Name: value' (e.g. --header 'Authorization: Bearer …')");
    if (OWN_HEADERS.has(name.toLowerCase())) throw new UsageError(`--header ${name}: the replay sets this header itself`);
    const value = text.slice(colon + 1).trim();
    if (value === "" || /[\r\n\0]/.test(value)) throw new UsageError(`--header ${name}: the value is empty or holds a line break`);
    out[name] = value;
  }
  return out;
}

/**
 * Where the replay's records go: --log-file, else the log it was read from (appended to, when it is a file
 * of ours; the log writer refuses anything else). A log read from stdin, or audit-chained (a replay's records
 * would not join its chain), needs --log-file.
 */
export function replayLogTarget(log: string, records: readonly LogRecord[], logFile: string | undefined): string {
  if (logFile) return logFile;
  if (log === "-") throw new UsageError("the log came from stdin: say where the replay's records go with --log-file FILE");
  if (records.some((r) => typeof r.seq === "number")) throw new UsageError(`${log} is audit-chained: the replay's records cannot join its chain; write them elsewhere with --log-file FILE`);
  return log;
}
