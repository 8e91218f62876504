/**
 * Log completeness (mcp-wiretap only, on a fresh instance with its own log file). Load: `tools/call` POSTs
 * sent open-loop (a cap on requests in flight), each answered as an event stream of `progress`
 * notifications and the result, so one exchange carries 1 + progress + 1 JSON-RPC messages; the exchange
 * rate is set so that messages cross the proxy at the rate asked. The log is read once it stops growing,
 * and again after the proxy was stopped (SIGTERM flushes it).
 * Counted: `event:"rpc"` records when the proxy writes them (expected: one per message; also checked: every
 * request id `bench-log-<n>` appears in some rpc record), otherwise `event:"http"` records of POST /mcp
 * (expected: one per exchange).
 */
import { readFileSync } from "node:fs";
import { request, type Dispatcher } from "undici";
import { MCP_HEADERS, toolsCallWithProgress } from "./clients.ts";
import type { RunningPath } from "./paths.ts";
import type { Upstream } from "./upstream.ts";
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
  /** JSON-RPC messages per second asked for (both directions). */
  targetRate: number;
  /** Messages per exchange: the request, `progress` notifications, the result. */
  messagesPerExchange: number;
  /** Keep-alive connections the client used (set by the caller). */
  connections: number | null;
  seconds: number;
  /** Exchanges started / answered with status 200. */
  exchanges: number;
  answered: number;
  /** Messages that crossed the proxy: requests sent + messages the upstream wrote. */
  sent: number;
  /** Messages per second over the sending window. */
  achievedRate: number | null;
  /** Request ids that appear in no rpc record (null without rpc records). */
  requestIdsMissing: number | null;
  beforeStop: LogCount;
  afterStop: LogCount | null;
  /** Which record kind the missing count is based on. */
  countedEvent: "rpc" | "http";
  written: number;
  missing: number;
  stop: string | null;
  /** The proxy's stderr after its banner (it reports log trouble there). */
  stderr: string | null;
  /** The `stop` record, verbatim. */
  stopRecord: string | null;
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

export async function runLogging(
  path: RunningPath,
  dispatcher: Dispatcher,
  origin: string,
  upstream: Upstream,
  opts: { rate: number; seconds: number; maxInFlight: number; progress: number },
): Promise<LoggingResult> {
  if (!path.logFile || !path.child) throw new Error("the logging measure needs mcp-wiretap with a log file");
  const errors = new ErrorTally();
  const headers = { ...MCP_HEADERS, accept: "application/json, text/event-stream" };
  const perExchange = opts.progress + 2;
  const exchangeRate = opts.rate / perExchange;
  const upstreamBefore = upstream.messagesWritten;
  let sent = 0;
  let answered = 0;
  let inFlight = 0;
  const start = nowMs();
  const end = start + opts.seconds * 1000;
  const send = (): void => {
    const id = `${ID_PREFIX}${sent++}`;
    inFlight++;
    request(`${origin}/mcp`, { dispatcher, method: "POST", headers, body: toolsCallWithProgress(id, opts.progress) })
      .then(async (res) => {
        await res.body.text();
        if (res.statusCode === 200) answered++;
        else errors.add(new Error(`HTTP ${res.statusCode}`));
      })
      .catch((err: unknown) => errors.add(err))
      .finally(() => inFlight--);
  };
  while (nowMs() < end) {
    const due = Math.floor(((nowMs() - start) / 1000) * exchangeRate);
    while (sent < due && inFlight < opts.maxInFlight) send();
    await sleep(1);
  }
  const sendSeconds = (nowMs() - start) / 1000;
  await waitFor(() => inFlight === 0, 20_000, 10);
  const messages = sent + (upstream.messagesWritten - upstreamBefore);

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
    return (c.http >= sent && c.rpc >= messages) || nowMs() - stableSince > 1000;
  }, 15_000, 100);
  const beforeStop = countLog(path.logFile);
  const stop = await path.stop();
  await sleep(100);
  const afterStop = countLog(path.logFile);
  const stderr = path.child.stderr.replace(/^[\s\S]*\n {2}export [^\n]*\n/, "").trim(); // the banner ends with the client settings
  const stopRecord = readLastRecord(path.logFile, "stop");
  const countedEvent = afterStop.rpc > 0 ? "rpc" : "http";
  const expected = countedEvent === "rpc" ? messages : sent;
  const written = countedEvent === "rpc" ? afterStop.rpc : afterStop.http;
  return {
    targetRate: opts.rate,
    messagesPerExchange: perExchange,
    connections: null,
    seconds: round(sendSeconds) ?? 0,
    exchanges: sent,
    answered,
    sent: messages,
    achievedRate: round(messages / sendSeconds, 0),
    requestIdsMissing: countedEvent === "rpc" ? sent - afterStop.rpcIdsSeen : null,
    beforeStop,
    afterStop,
    countedEvent,
    written,
    missing: Math.max(0, expected - written),
    stop,
    stderr: stderr || null,
    stopRecord,
    errors: errors.toJSON(),
  };
}

function readLastRecord(file: string, event: string): string | null {
  try {
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    for (let i = lines.length - 1; i >= Math.max(0, lines.length - 50); i--) {
      if (lines[i]?.includes(`"event":"${event}"`)) return lines[i] ?? null;
    }
  } catch {
    // no log
  }
  return null;
}
