/**
 * SSE added latency: the upstream stamps each event with its monotonic clock just before writing it; the
 * client (same process, same clock) takes the difference when the complete event has arrived.
 *
 * Through a proxy, the same events also go to a direct stream at the same moment (`/sse?pair=`), and each
 * event's added latency is its proxied latency minus its direct latency. A stall of the shared machine
 * (another process, the hypervisor) delays both copies and cancels out; what the proxy adds does not.
 */
import { request, type Dispatcher } from "undici";
import { ErrorTally, summarize, type Summary } from "./stats.ts";

export interface SseResult {
  eventsExpected: number;
  eventsReceived: number;
  latencyMs: Summary;
  /** Through a proxy: the direct copy of the same events, and the per-event difference. */
  paired: { directMs: Summary; addedMs: Summary; events: number } | null;
  errors: ReturnType<ErrorTally["toJSON"]>;
}

let pairs = 0;

export async function runSseLatency(
  dispatcher: Dispatcher,
  origin: string,
  opts: { count: number; intervalMs: number; direct?: Dispatcher },
): Promise<SseResult> {
  const errors = new ErrorTally();
  const signal = AbortSignal.timeout(opts.count * opts.intervalMs + 10_000);
  const query = `count=${opts.count}&interval=${opts.intervalMs}`;
  const pair = opts.direct ? `&pair=p${++pairs}` : "";
  const [main, direct] = await Promise.all([
    readEvents(dispatcher, `${origin}/sse?${query}${pair}`, signal, errors),
    opts.direct ? readEvents(opts.direct, `${origin}/sse?${query}${pair}`, signal, errors) : null,
  ]);
  let paired: SseResult["paired"] = null;
  if (direct) {
    const added: number[] = [];
    for (const [n, ms] of main) {
      const reference = direct.get(n);
      if (reference !== undefined) added.push(ms - reference);
    }
    paired = { directMs: summarize([...direct.values()]), addedMs: summarize(added), events: added.length };
  }
  return { eventsExpected: opts.count, eventsReceived: main.size, latencyMs: summarize([...main.values()]), paired, errors: errors.toJSON() };
}

/** Latency (ms) of each event, by its progress number. */
async function readEvents(dispatcher: Dispatcher, url: string, signal: AbortSignal, errors: ErrorTally): Promise<Map<number, number>> {
  const latencies = new Map<number, number>();
  try {
    const res = await request(url, { dispatcher, headers: { accept: "text/event-stream" }, signal });
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
        const params = (JSON.parse(data.slice(6)) as { params?: { sentNs?: string; progress?: number } }).params;
        if (params?.sentNs && typeof params.progress === "number") latencies.set(params.progress, Number(now - BigInt(params.sentNs)) / 1e6);
      }
    }
  } catch (err) {
    errors.add(err);
  }
  return latencies;
}
