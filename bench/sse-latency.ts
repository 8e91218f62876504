/**
 * SSE added latency: the upstream stamps each event with its monotonic clock just before writing it; the
 * client (same process, same clock) takes the difference when the complete event has arrived.
 */
import { request, type Dispatcher } from "undici";
import { ErrorTally, summarize, type Summary } from "./stats.ts";

export interface SseResult {
  eventsExpected: number;
  eventsReceived: number;
  latencyMs: Summary;
  errors: ReturnType<ErrorTally["toJSON"]>;
}

export async function runSseLatency(dispatcher: Dispatcher, origin: string, opts: { count: number; intervalMs: number }): Promise<SseResult> {
  const errors = new ErrorTally();
  const latencies: number[] = [];
  const signal = AbortSignal.timeout(opts.count * opts.intervalMs + 10_000);
  try {
    const res = await request(`${origin}/sse?count=${opts.count}&interval=${opts.intervalMs}`, {
      dispatcher,
      headers: { accept: "text/event-stream" },
      signal,
    });
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    let buffer = "";
    res.body.setEncoding("utf8");
    for await (const chunk of res.body as AsyncIterable<string>) {
      const now = process.hrtime.bigint();
      buffer += chunk;
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = event.split("\n").find((l) => l.startsWith("data: "));
        if (!data) continue;
        const sentNs = (JSON.parse(data.slice(6)) as { params?: { sentNs?: string } }).params?.sentNs;
        if (sentNs) latencies.push(Number(now - BigInt(sentNs)) / 1e6);
      }
    }
  } catch (err) {
    errors.add(err);
  }
  return { eventsExpected: opts.count, eventsReceived: latencies.length, latencyMs: summarize(latencies), errors: errors.toJSON() };
}
