/**
 * Log completeness (mcp-wiretap only, on a fresh instance with its own log file): `tools/call` POSTs, one
 * JSON-RPC message each, sent open-loop at a fixed rate (with a cap on requests in flight), then the log is
 * read once it stops growing and again after the proxy was stopped (SIGTERM flushes it).
 * Counted: `event:"http"` records for POST /mcp, and `event:"rpc"` records when the proxy writes them —
 * an rpc record counts for the request whose unique id (`bench-log-<n>`) it mentions.
 */
import { readFileSync } from "node:fs";
import { request, type Dispatcher } from "undici";
import { MCP_HEADERS, toolsCall } from "./clients.ts";
import type { RunningPath } from "./paths.ts";
import { ErrorTally, round } from "./stats.ts";
import { nowMs, sleep, waitFor } from "./time.ts";

export interface LogCount {
  lines: number;
  unparsable: number;
  http: number;
  rpc: number;
  rpcIdsSeen: number;
  byEvent: Record<string, number>;
  /** Up to 3 verbatim samples of each warn/error record's event. */
  problems: Record<string, string[]>;
}

export interface LoggingResult {
  targetRate: number;
  /** Keep-alive connections the client used (set by the caller). */
  connections: number | null;
  seconds: number;
  sent: number;
  answered: number;
  achievedRate: number | null;
  beforeStop: LogCount;
  afterStop: LogCount | null;
  /** Which record kind the missing count is based on. */
  countedEvent: "rpc" | "http";
  written: number;
  missing: number;
  stop: string | null;
  errors: ReturnType<ErrorTally["toJSON"]>;
}

const ID_PREFIX = "bench-log-";

export function countLog(file: string): LogCount {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    // not created yet
  }
  const count: LogCount = { lines: 0, unparsable: 0, http: 0, rpc: 0, rpcIdsSeen: 0, byEvent: {}, problems: {} };
  const ids = new Set<string>();
  for (const line of text.split("\n")) {
    if (!line) continue;
    count.lines++;
    let record: { event?: unknown; level?: unknown; method?: unknown; path?: unknown };
    try {
      record = JSON.parse(line) as typeof record;
    } catch {
      count.unparsable++;
      continue;
    }
    const event = String(record.event ?? "(none)");
    count.byEvent[event] = (count.byEvent[event] ?? 0) + 1;
    if (event === "http" && record.method === "POST" && String(record.path).startsWith("/mcp")) count.http++;
    if (event === "rpc") {
      count.rpc++;
      for (const m of line.matchAll(/bench-log-(\d+)/g)) ids.add(m[1] ?? "");
    }
    if (record.level === "warn" || record.level === "error" || record.level === "fatal") {
      const samples = (count.problems[event] ??= []);
      if (samples.length < 3) samples.push(line.slice(0, 600));
    }
  }
  count.rpcIdsSeen = ids.size;
  return count;
}

export async function runLogging(path: RunningPath, dispatcher: Dispatcher, origin: string, opts: { rate: number; seconds: number; maxInFlight: number }): Promise<LoggingResult> {
  if (!path.logFile || !path.child) throw new Error("the logging measure needs mcp-wiretap with a log file");
  const errors = new ErrorTally();
  const headers = { ...MCP_HEADERS, accept: "application/json, text/event-stream" };
  let sent = 0;
  let answered = 0;
  let inFlight = 0;
  const start = nowMs();
  const end = start + opts.seconds * 1000;
  const send = (): void => {
    const id = `${ID_PREFIX}${sent++}`;
    inFlight++;
    request(`${origin}/mcp`, { dispatcher, method: "POST", headers, body: toolsCall(id) })
      .then(async (res) => {
        await res.body.text();
        if (res.statusCode === 200) answered++;
        else errors.add(new Error(`HTTP ${res.statusCode}`));
      })
      .catch((err: unknown) => errors.add(err))
      .finally(() => inFlight--);
  };
  while (nowMs() < end) {
    const due = Math.floor(((nowMs() - start) / 1000) * opts.rate);
    while (sent < due && inFlight < opts.maxInFlight) send();
    await sleep(1);
  }
  const sendSeconds = (nowMs() - start) / 1000;
  await waitFor(() => inFlight === 0, 20_000, 10);

  // Wait until the log stops growing (or holds every record), then stop the proxy and count again.
  let last = -1;
  let stableSince = nowMs();
  await waitFor(() => {
    const c = countLog(path.logFile as string);
    const n = c.http + c.rpc;
    if (n !== last) {
      last = n;
      stableSince = nowMs();
    }
    return c.http >= sent || nowMs() - stableSince > 1000;
  }, 15_000, 100);
  const beforeStop = countLog(path.logFile);
  const stop = await path.stop();
  await sleep(100);
  const afterStop = countLog(path.logFile);
  const final = afterStop;
  const countedEvent = final.rpc > 0 ? "rpc" : "http";
  const written = countedEvent === "rpc" ? (final.rpcIdsSeen > 0 ? final.rpcIdsSeen : final.rpc) : final.http;
  return {
    targetRate: opts.rate,
    connections: null,
    seconds: round(sendSeconds) ?? 0,
    sent,
    answered,
    achievedRate: round(sent / sendSeconds, 0),
    beforeStop,
    afterStop,
    countedEvent,
    written,
    missing: Math.max(0, sent - written),
    stop,
    errors: errors.toJSON(),
  };
}
