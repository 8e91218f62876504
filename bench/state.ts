/**
 * Shared state at a distance: one mcp-wiretap in enforce mode per Redis placement (on loopback, and behind a
 * TCP hop that delays every answer by 2 ms and by 100 ms), a rate limit counting every `echo` call in Redis
 * and none of the `other` calls. Measured side by side: counted calls at c=8 and at a concurrency that saturates a
 * distant Redis's round trip, then counted and uncounted calls together with /healthz polled throughout
 * (its worst answer shows any stall of the proxy's event loop).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Dispatcher } from "undici";
import { Child } from "./child.ts";
import { dispatcherFor } from "./clients.ts";
import { runLoad, type LoadResult } from "./load.ts";
import { startWiretap, type BenchContext, type RunningPath } from "./paths.ts";
import { round, summarize, type Summary } from "./stats.ts";
import { startRedisServer } from "./variants.ts";

export const STATE_DELAYS_MS = [0, 2, 100] as const;
/** Enough calls in flight to fill a 100 ms round trip at the loopback rate. */
export const SATURATING_CONCURRENCY = 64;

/** Enforce mode: a counted call is held until Redis answers (monitor mode forwards it first and only its record waits). */
const POLICY = `# bench: every echo call is counted in Redis (a limit never reached); other calls are not
mode: enforce
rateLimits:
  - name: bench-shared-counter
    match: { method: tools/call, tool: echo, kind: request }
    perMinute: 1000000000
    per: global
    action: deny
`;

export interface StatePlacement {
  delayMs: number;
  countedC8: Omit<LoadResult, "errors"> & { errors: number };
  countedSaturating: Omit<LoadResult, "errors"> & { errors: number };
  /** Counted and uncounted calls at c=8 each, at once. */
  mixed: { counted: Omit<LoadResult, "errors"> & { errors: number }; uncounted: Omit<LoadResult, "errors"> & { errors: number }; healthzMs: Summary };
  /** Records that say a message was decided without Redis (should be none). */
  decidedWithoutRedis: number;
}

export interface StateResult {
  placements: StatePlacement[];
}

const brief = (r: LoadResult): Omit<LoadResult, "errors"> & { errors: number } => ({ ...r, errors: r.errors.total });

const PROBES = path.join(path.dirname(fileURLToPath(import.meta.url)), "state-probes.ts");

/** The delaying hop in a process of its own; its port. */
async function startHop(redisPort: number, delayMs: number): Promise<{ port: number; stop(): Promise<void> }> {
  const child = new Child("delaying-hop", process.execPath, [PROBES, "hop", String(redisPort), String(delayMs)]);
  const ready = await child.waitForOutput(/HOP_PORT (\d+)/, 10_000);
  if (!ready) {
    await child.stop();
    throw new Error(`the delaying hop did not start: ${child.stderr.slice(-500)}`);
  }
  return {
    port: Number(ready[1]),
    stop: async () => {
      await child.stop();
    },
  };
}

/** /healthz every 10 ms for `ms`, asked from a process of its own: each answer's time. */
async function pollHealth(p: RunningPath, ms: number): Promise<number[]> {
  const child = new Child("healthz-probe", process.execPath, [PROBES, "healthz", `http://${p.proxy!.host}:${p.proxy!.port}/healthz`, String(ms)]);
  const done = await child.waitForOutput(/^\[.*\]$/m, ms + 15_000);
  await child.stop();
  return done ? (JSON.parse(done[0]) as number[]) : [];
}

async function measurePlacement(ctx: BenchContext, origin: string, redisPort: number, delayMs: number, windowMs: number, warmupMs: number): Promise<StatePlacement> {
  const hop = delayMs > 0 ? await startHop(redisPort, delayMs) : null;
  const policy = path.join(ctx.tmp, `state-distance-${delayMs}.yaml`);
  writeFileSync(policy, POLICY);
  const p = await startWiretap(ctx, "mcp-wiretap+state", { args: ["--state", `redis://127.0.0.1:${hop?.port ?? redisPort}/0`, "--config", policy], stop: async () => await hop?.stop() });
  const dispatcher: Dispatcher = dispatcherFor(p, {});
  let stopped = false;
  try {
    const load = (concurrency: number, tool: string) => runLoad(dispatcher, origin, { concurrency, warmupMs, durationMs: windowMs, tool });
    const countedC8 = await load(8, "echo");
    const countedSaturating = await load(SATURATING_CONCURRENCY, "echo");
    const [counted, uncounted, health] = await Promise.all([load(8, "echo"), load(8, "other"), pollHealth(p, warmupMs + windowMs)]);
    await dispatcher.close().catch(() => undefined);
    stopped = true;
    await p.stop();
    const log = p.logFile ? readFileSync(p.logFile, "utf8") : "";
    return {
      delayMs,
      countedC8: brief(countedC8),
      countedSaturating: brief(countedSaturating),
      mixed: { counted: brief(counted), uncounted: brief(uncounted), healthzMs: summarize(health) },
      decidedWithoutRedis: (log.match(/shared rate-limit counters unreachable/g) ?? []).length,
    };
  } finally {
    if (!stopped) {
      await dispatcher.destroy().catch(() => undefined);
      await p.stop();
    }
  }
}

export async function runState(ctx: BenchContext, origin: string, opts: { windowMs: number; warmupMs: number; progress: (msg: string) => void }): Promise<StateResult> {
  const redis = await startRedisServer();
  try {
    const placements: StatePlacement[] = [];
    for (const delayMs of STATE_DELAYS_MS) {
      opts.progress(`state: Redis ${delayMs === 0 ? "on loopback" : `${delayMs} ms away`}: counted calls at c=8 and c=${SATURATING_CONCURRENCY}, then counted + uncounted with /healthz polled`);
      placements.push(await measurePlacement(ctx, origin, redis.port, delayMs, opts.windowMs, opts.warmupMs));
    }
    return { placements };
  } finally {
    await redis.stop();
  }
}

/** The side-by-side table, and issue 31's targets. */
export function stateTable(r: StateResult): string {
  const rows = r.placements.map((x) => {
    const where = x.delayMs === 0 ? "loopback" : `${x.delayMs} ms away`;
    const cell = (l: { reqPerSec: number | null; latencyMs: Summary }): string => `${l.reqPerSec ?? "-"} req/s, p50 ${l.latencyMs.p50 ?? "-"} ms`;
    return `  ${where.padEnd(12)} | ${cell(x.countedC8).padEnd(26)} | ${cell(x.countedSaturating).padEnd(26)} | ${cell(x.mixed.counted).padEnd(26)} | ${cell(x.mixed.uncounted).padEnd(26)} | p99 ${x.mixed.healthzMs.p99} max ${x.mixed.healthzMs.max} ms`;
  });
  const head = `  ${"Redis".padEnd(12)} | ${"counted c=8".padEnd(26)} | ${`counted c=${SATURATING_CONCURRENCY}`.padEnd(26)} | ${"mixed: counted c=8".padEnd(26)} | ${"mixed: uncounted c=8".padEnd(26)} | /healthz during mixed`;
  return [head, ...rows].join("\n");
}

export function stateTargets(r: StateResult): { target: string; value: string; verdict: "PASS" | "FAIL" | "SKIP" }[] {
  const at = (ms: number) => r.placements.find((x) => x.delayMs === ms);
  const local = at(0);
  const far = at(100);
  if (!local || !far) return [{ target: "issue 31: shared state 100 ms away", value: "not measured", verdict: "SKIP" }];
  const best = Math.max(far.countedSaturating.reqPerSec ?? 0, far.countedC8.reqPerSec ?? 0);
  const saturated = local.countedC8.reqPerSec ?? 0;
  const ratio = saturated > 0 ? round(best / saturated, 2) : null;
  const uncounted = local.mixed.uncounted.reqPerSec ? round((far.mixed.uncounted.reqPerSec ?? 0) / local.mixed.uncounted.reqPerSec, 2) : null;
  const stall = round((far.mixed.healthzMs.max ?? Infinity) - (local.mixed.healthzMs.max ?? 0), 1);
  return [
    {
      target: `issue 31: counted calls, Redis 100 ms away at c=${SATURATING_CONCURRENCY} >= 0.8x loopback Redis at c=8`,
      value: `${ratio}x (${best} vs ${saturated} req/s; at c=8 ${far.countedC8.reqPerSec} req/s, p50 ${far.countedC8.latencyMs.p50} vs ${local.countedC8.latencyMs.p50} ms)`,
      verdict: ratio === null ? "SKIP" : ratio >= 0.8 ? "PASS" : "FAIL",
    },
    { target: "issue 31: uncounted calls beside counted ones, Redis 100 ms away >= 0.9x loopback", value: `${uncounted}x (${far.mixed.uncounted.reqPerSec} vs ${local.mixed.uncounted.reqPerSec} req/s)`, verdict: uncounted === null ? "SKIP" : uncounted >= 0.9 ? "PASS" : "FAIL" },
    { target: "issue 31: /healthz worst answer, Redis 100 ms away, <= loopback's + 10 ms", value: `${stall} ms (${far.mixed.healthzMs.max} vs ${local.mixed.healthzMs.max} ms)`, verdict: stall === null ? "SKIP" : stall <= 10 ? "PASS" : "FAIL" },
    { target: "issue 31: no message decided without Redis", value: r.placements.map((x) => x.decidedWithoutRedis).join(", "), verdict: r.placements.every((x) => x.decidedWithoutRedis === 0) ? "PASS" : "FAIL" },
  ];
}
