/**
 * Proxy memory, read from /proc/<pid>/status (VmRSS) of the proxy's own process:
 * - while one large response streams through it (sampled every 50 ms; growth = max − RSS just before);
 * - with many SSE streams open through it at once (each held open by the upstream after one event).
 */
import { request, type Dispatcher } from "undici";
import type { Child } from "./child.ts";
import type { Upstream } from "./upstream.ts";
import { ErrorTally, round } from "./stats.ts";
import { nowMs, sleep, waitFor } from "./time.ts";

export interface BigResponseResult {
  mib: number;
  bytesReceived: number;
  seconds: number | null;
  mibPerSec: number | null;
  rssBeforeMiB: number | null;
  rssMaxMiB: number | null;
  rssGrowthMiB: number | null;
  errors: ReturnType<ErrorTally["toJSON"]>;
}

function sampler(child: Child | null, everyMs: number): { stop(): number | null } {
  let max: number | null = null;
  const take = (): void => {
    const rss = child?.rssMiB() ?? null;
    if (rss !== null && (max === null || rss > max)) max = rss;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return max;
    },
  };
}

export async function runBigResponse(dispatcher: Dispatcher, origin: string, child: Child | null, mib: number, timeoutMs: number): Promise<BigResponseResult> {
  const errors = new ErrorTally();
  await sleep(200);
  const before = child?.rssMiB() ?? null;
  const samples = sampler(child, 50);
  let bytes = 0;
  const t0 = nowMs();
  let seconds: number | null = null;
  try {
    const res = await request(`${origin}/big?mb=${mib}`, { dispatcher, signal: AbortSignal.timeout(Math.max(1, Math.floor(timeoutMs))) });
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    for await (const chunk of res.body as AsyncIterable<Buffer>) bytes += chunk.length;
    if (bytes !== mib * 1024 * 1024) throw new Error(`received ${bytes} bytes of ${mib * 1024 * 1024}`);
    seconds = (nowMs() - t0) / 1000;
  } catch (err) {
    errors.add(err);
  }
  const max = samples.stop();
  return {
    mib,
    bytesReceived: bytes,
    seconds: round(seconds),
    mibPerSec: seconds ? round(mib / seconds, 1) : null,
    rssBeforeMiB: round(before, 1),
    rssMaxMiB: round(max, 1),
    rssGrowthMiB: before !== null && max !== null ? round(max - before, 1) : null,
    errors: errors.toJSON(),
  };
}

export interface OpenStreamsResult {
  wanted: number;
  /** Streams the upstream had open (request arrived and first event written). */
  openAtUpstream: number;
  /** Streams whose first event reached the client. */
  firstEventAtClient: number;
  openSeconds: number | null;
  rssBeforeMiB: number | null;
  rssWithStreamsMiB: number | null;
  kibPerStream: number | null;
  /** Upstream streams the proxy had not closed 3 s after the clients closed theirs (set by the caller). */
  upstreamStillOpen3sAfterClientsClosed: number | null;
  errors: ReturnType<ErrorTally["toJSON"]>;
}

export async function runOpenStreams(
  dispatcher: Dispatcher,
  origin: string,
  upstream: Upstream,
  child: Child | null,
  opts: { count: number; batch: number; timeoutMs: number },
): Promise<OpenStreamsResult> {
  const errors = new ErrorTally();
  const controller = new AbortController();
  const holdsBefore = upstream.openHolds;
  const before = child?.rssMiB() ?? null;
  let firstEvents = 0;
  let launched = 0;
  const t0 = nowMs();
  const deadline = t0 + opts.timeoutMs;
  const pending: Promise<void>[] = [];
  const open = (): Promise<void> =>
    request(`${origin}/hold`, { dispatcher, headers: { accept: "text/event-stream" }, signal: controller.signal }).then(
      (res) => {
        res.body.once("data", () => firstEvents++);
        res.body.on("error", () => undefined);
      },
      (err: unknown) => {
        if (!controller.signal.aborted) errors.add(err);
      },
    );

  while (launched < opts.count && nowMs() < deadline) {
    const n = Math.min(opts.batch, opts.count - launched);
    for (let i = 0; i < n; i++) pending.push(open());
    launched += n;
    await waitFor(() => upstream.openHolds - holdsBefore >= launched - errors.total, deadline - nowMs(), 10);
  }
  await waitFor(() => firstEvents >= launched - errors.total, Math.max(0, Math.min(5000, deadline - nowMs())), 20);
  const openSeconds = (nowMs() - t0) / 1000;
  const openAtUpstream = upstream.openHolds - holdsBefore;
  await sleep(500);
  let rss: number | null = null;
  for (let i = 0; i < 5; i++) {
    const r = child?.rssMiB() ?? null;
    if (r !== null && (rss === null || r > rss)) rss = r;
    await sleep(100);
  }
  const result: OpenStreamsResult = {
    wanted: opts.count,
    openAtUpstream,
    firstEventAtClient: firstEvents,
    openSeconds: round(openSeconds),
    rssBeforeMiB: round(before, 1),
    rssWithStreamsMiB: round(rss, 1),
    upstreamStillOpen3sAfterClientsClosed: null,
    kibPerStream: before !== null && rss !== null && openAtUpstream > 0 ? round(((rss - before) * 1024) / openAtUpstream, 1) : null,
    errors: errors.toJSON(),
  };
  controller.abort();
  await Promise.allSettled(pending);
  return result;
}
