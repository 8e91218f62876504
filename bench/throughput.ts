/**
 * Throughput and latency of small `tools/call` requests, every path measured in short windows taken in
 * turn (round after round, the order rotated each round) rather than one path after the other: the machine's
 * speed drifts over seconds (other tenants, hypervisor steal), and a drift then lands on every path alike.
 * Each path's windows are pooled; the per-round req/s are kept so the spread of the ratios can be shown.
 */
import type { Dispatcher } from "undici";
import { poolRuns, runLoad, type LoadRun } from "./load.ts";
import type { RunningPath } from "./paths.ts";
import type { LoadWithCpu } from "./report.ts";
import { round } from "./stats.ts";
import type { Upstream } from "./upstream.ts";

export interface LoadConfig {
  concurrency: number;
  sseAnswer: boolean;
  /** Measured time per path, split over the rounds. */
  durationMs: number;
}

export interface ThroughputTarget {
  path: RunningPath;
  dispatcher: Dispatcher;
}

interface Window {
  run: LoadRun;
  cpuSeconds: number | null;
  upstreamConnections: number;
}

export async function runInterleavedLoad(
  targets: readonly ThroughputTarget[],
  configs: readonly LoadConfig[],
  opts: { rounds: number; warmupMs: number; origin: string; upstream: Upstream; alive: (p: RunningPath) => boolean; progress: (msg: string) => void },
): Promise<Map<RunningPath, LoadWithCpu[]>> {
  const windows = new Map<RunningPath, Window[][]>(targets.map((t) => [t.path, configs.map(() => [])]));
  for (let round = 0; round < opts.rounds; round++) {
    for (const [ci, config] of configs.entries()) {
      const label = `tools/call c=${config.concurrency}${config.sseAnswer ? " answered as SSE" : ""}`;
      opts.progress(`${label}, round ${round + 1}/${opts.rounds}: ${targets.map((t) => t.path.name).join(", ")}`);
      for (let k = 0; k < targets.length; k++) {
        const { path, dispatcher } = targets[(k + round) % targets.length]!;
        if (!opts.alive(path)) continue;
        const cpu0 = path.child?.cpuSeconds() ?? null;
        const conns0 = opts.upstream.connectionsAccepted;
        const run = await runLoad(dispatcher, opts.origin, {
          concurrency: config.concurrency,
          warmupMs: opts.warmupMs,
          durationMs: config.durationMs / opts.rounds,
          sseAnswer: config.sseAnswer,
        });
        const cpu1 = path.child?.cpuSeconds() ?? null;
        // CPU over warm-up + window, scaled to the window (warm-up is short; an estimate).
        const window = config.durationMs / opts.rounds;
        const cpuSeconds = cpu0 !== null && cpu1 !== null ? ((cpu1 - cpu0) * window) / (window + opts.warmupMs) : null;
        windows.get(path)![ci]!.push({ run, cpuSeconds, upstreamConnections: opts.upstream.connectionsAccepted - conns0 });
      }
    }
  }
  const out = new Map<RunningPath, LoadWithCpu[]>();
  for (const [path, perConfig] of windows) {
    out.set(
      path,
      perConfig.flatMap((ws, ci) => {
        if (ws.length === 0) return [];
        const pooled = poolRuns(ws.map((w) => w.run));
        const cpu = ws.every((w) => w.cpuSeconds !== null) ? ws.reduce((a, w) => a + w.cpuSeconds!, 0) : null;
        return [
          {
            ...pooled,
            roundsReqPerSec: ws.map((w) => w.run.reqPerSec),
            proxyCpuMsPerReq: configs[ci]!.sseAnswer || cpu === null || pooled.requests === 0 ? null : round((cpu * 1000) / pooled.requests, 3),
            upstreamConnections: ws.reduce((a, w) => a + w.upstreamConnections, 0),
          },
        ];
      }),
    );
  }
  return out;
}
