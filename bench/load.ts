/**
 * Closed-loop load: `concurrency` workers each send small `tools/call` POSTs back to back over keep-alive,
 * for a warm-up and then a measured window. Latency = request start → response body read.
 */
import { request, type Dispatcher } from "undici";
import { MCP_HEADERS, toolsCall } from "./clients.ts";
import { ErrorTally, round, summarize, type Summary } from "./stats.ts";
import { nowMs } from "./time.ts";

export interface LoadOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Ask for the answer as text/event-stream instead of application/json. */
  sseAnswer?: boolean;
  /** The tool called (default `echo`). */
  tool?: string;
}

export interface LoadResult {
  concurrency: number;
  answer: "json" | "sse";
  requests: number;
  seconds: number;
  reqPerSec: number | null;
  latencyMs: Summary;
  errors: ReturnType<ErrorTally["toJSON"]>;
}

let nextId = 1;

/** One window's result, with its raw latencies (for pooling windows; not written to results.json). */
export interface LoadRun extends LoadResult {
  samples: number[];
}

export async function runLoad(dispatcher: Dispatcher, origin: string, opts: LoadOptions): Promise<LoadRun> {
  const headers = { ...MCP_HEADERS, accept: opts.sseAnswer ? "text/event-stream" : "application/json, text/event-stream" };
  const errors = new ErrorTally();
  const latencies: number[] = [];
  const start = nowMs();
  const measureFrom = start + opts.warmupMs;
  const end = measureFrom + opts.durationMs;
  let lastDone = measureFrom;

  const worker = async (): Promise<void> => {
    // Bounded by time; a request cannot hang longer than the dispatcher's 15 s timeouts.
    while (nowMs() < end) {
      const t0 = nowMs();
      try {
        const res = await request(`${origin}/mcp`, { dispatcher, method: "POST", headers, body: toolsCall(nextId++, opts.tool) });
        const text = await res.body.text();
        if (res.statusCode !== 200 || !text.includes('"result"')) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
        const t1 = nowMs();
        if (t0 >= measureFrom) {
          latencies.push(t1 - t0);
          lastDone = t1;
        }
      } catch (err) {
        errors.add(err);
        if (nowMs() < end) await new Promise((r) => setTimeout(r, 10)); // no hot loop on a dead proxy
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const seconds = (lastDone - measureFrom) / 1000;
  return {
    concurrency: opts.concurrency,
    answer: opts.sseAnswer ? "sse" : "json",
    requests: latencies.length,
    seconds: round(seconds) ?? 0,
    reqPerSec: seconds > 0 ? round(latencies.length / seconds, 0) : null,
    latencyMs: summarize(latencies),
    errors: errors.toJSON(),
    samples: latencies,
  };
}

/** Several windows of one path and load as one: requests and seconds summed, latencies pooled. */
export function poolRuns(runs: readonly LoadRun[]): LoadResult {
  const first = runs[0];
  if (!first) throw new Error("poolRuns: no runs");
  const requests = runs.reduce((a, r) => a + r.requests, 0);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const errors = new ErrorTally();
  for (const r of runs) for (const m of r.errors.messages) for (let i = 0; i < m.count; i++) errors.add(m.message);
  errors.total = runs.reduce((a, r) => a + r.errors.total, 0);
  return {
    concurrency: first.concurrency,
    answer: first.answer,
    requests,
    seconds: round(seconds) ?? 0,
    reqPerSec: seconds > 0 ? round(requests / seconds, 0) : null,
    latencyMs: summarize(runs.flatMap((r) => r.samples)),
    errors: errors.toJSON(),
  };
}
