/**
 * `npm run bench`: one loopback HTTPS MCP-like upstream, driven through each path in turn (direct,
 * mcp-wiretap, bare http-mitm-proxy, mitmdump when installed), with the same undici client. Prints a table
 * to stdout and writes bench/results.json. See docs/performance.md.
 */
import { spawn } from "node:child_process";
import { lookup } from "node:dns/promises";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Dispatcher } from "undici";
import { killAllChildren } from "./child.ts";
import { dispatcherFor } from "./clients.ts";
import { runHandshakes } from "./handshake.ts";
import { runSseLatency } from "./sse-latency.ts";
import { countLog, runLogging } from "./logging.ts";
import { runBigResponse, runOpenStreams } from "./memory.ts";
import { parseOptions, type Measure } from "./options.ts";
import { PathUnavailable, REPO, VARIANT_PATHS, startPath, startWiretap, type BenchContext, type PathName, type RunningPath } from "./paths.ts";
import { createBenchPki } from "./pki.ts";
import { checkTargets, computeRatios, table, writeResults, type PathResult, type Results } from "./report.ts";
import { errorText, round } from "./stats.ts";
import { sleep, waitFor, within } from "./time.ts";
import { runInterleavedLoad } from "./throughput.ts";
import { runStdio } from "./stdio.ts";
import { runMock } from "./mock.ts";
import { runReplay } from "./replay.ts";
import { runMcpSearch } from "./mcp-search.ts";
import { hostileTable, runHostile } from "./hostile.ts";
import { startUpstream, type Upstream } from "./upstream.ts";
import { runState, stateTable, stateTargets, STATE_DELAYS_MS } from "./state.ts";

const WATCHDOG_MS = 240_000;
/** The variable-length measures (handshakes, big response, open streams) shrink to end the run by then. */
const BUDGET_MS = 215_000;
/** Keep-alive connections used by the logging measure (requests beyond them queue in the client). */
const LOG_CONNECTIONS = 32;
/** Progress notifications per logged exchange: 1 request + 8 notifications + 1 result = 10 messages. */
const LOG_PROGRESS = 8;
const RESULTS_FILE = path.join(REPO, "bench", "results.json");

const options = parseOptions(process.argv.slice(2));
const d = options.durations;
/** The hostile-peer section runs last, on its own time (nine proxies, one attack each): the watchdog waits for it. */
const HOSTILE_MS = options.measures.includes("hostile") ? 9 * (d.hostileSeconds + 6) * 1000 : 0;
/** The shared-state section (issue 31): three windows per Redis placement, each proxy started fresh. */
const STATE_MS = options.measures.includes("state") ? STATE_DELAYS_MS.length * (3 * (d.stateWindowMs + d.warmupMs) + 10_000) : 0;
/** The stdio start-up section (issue 25) runs after the rest, in a process of its own. */
const STARTUP_MS = options.measures.includes("startup") ? 180_000 : 0;
const startedAt = performance.now();
const progress = (msg: string): void => {
  process.stderr.write(`[bench ${((performance.now() - startedAt) / 1000).toFixed(1).padStart(5)} s] ${msg}\n`);
};

/** Time the rest of the run needs at least, for the paths not started yet and the logging measure. */
let reserveMs = 0;
function estimateReserve(pathsLeft: number, loggingLeft: boolean): number {
  // Fixed parts of a path (stop, SSE stream) and the least the variable parts get; the load runs come first.
  const perPath = 1000 + d.sseEvents * d.sseIntervalMs + 500 + 2000 + 2000 + 3000 + 3000;
  return pathsLeft * perPath + (loggingLeft ? d.logSeconds * 1000 + 6000 : 0);
}
/** How long a variable-length measure may take: its own limit, or less when the run's budget is short. */
function allowance(configuredMs: number, alsoKeepMs = 0): number {
  return Math.max(0, Math.floor(Math.min(configuredMs, BUDGET_MS - (performance.now() - startedAt) - reserveMs - alsoKeepMs)));
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-bench-"));
const cleanup = (): void => {
  killAllChildren();
  if (options.keepTemp) process.stderr.write(`[bench] temp dir kept: ${tmp}\n`);
  else rmSync(tmp, { recursive: true, force: true });
};
process.once("exit", cleanup);
process.once("SIGINT", () => {
  cleanup();
  process.exit(130);
});

const results: Results = {
  date: new Date().toISOString(),
  machine: {
    node: process.version,
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1) ?? 0,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((x) => round(x, 2) ?? 0),
    loadAverageAtEnd: [],
  },
  quick: options.quick,
  options: { paths: options.paths, measures: options.measures, durations: d },
  durationSeconds: 0,
  paths: [],
  logging: null,
  ratios: {},
  targets: [],
  notes: [],
};

function finish(): void {
  results.machine.loadAverageAtEnd = os.loadavg().map((x) => round(x, 2) ?? 0);
  results.durationSeconds = round((performance.now() - startedAt) / 1000, 1) ?? 0;
  results.ratios = computeRatios(results.paths);
  results.targets = checkTargets(results.paths, results.logging, options.quick);
  if (results.stdio && !("skipped" in results.stdio)) {
    const { latency: l, sustained: u } = results.stdio;
    const check = (target: string, value: number | null, ok: boolean): void => {
      results.targets.push({ target, value: String(value), verdict: value === null ? "SKIP" : ok ? "PASS" : "FAIL" });
    };
    check("stdio added latency p50 <= 0.2 ms", l.addedP50Ms, (l.addedP50Ms ?? Infinity) <= 0.2);
    check("stdio added latency p99 <= 1 ms", l.addedP99Ms, (l.addedP99Ms ?? Infinity) <= 1);
    check(`stdio ${u.targetRate} msg/s sustained`, u.achievedRate, (u.achievedRate ?? 0) >= u.targetRate * 0.95 && u.answered === u.sent);
    check("stdio missing records = 0", u.missingRecords, u.missingRecords === 0);
  }
  if (results.mock && !("skipped" in results.mock)) {
    const p50 = results.mock.mock.p50;
    results.targets.push({ target: "mock answer p50 <= 1 ms", value: String(p50), verdict: p50 === null ? "SKIP" : p50 <= 1 ? "PASS" : "FAIL" });
  }
  if (results.replay && !("skipped" in results.replay)) {
    const added = results.replay.addedMedianMs;
    results.targets.push({ target: "a replay costs <= 50 ms over the same call made directly with the SDK (median)", value: String(added), verdict: added === null ? "SKIP" : added <= 50 ? "PASS" : "FAIL" });
  }
  if (results.mcpSearch && !("skipped" in results.mcpSearch)) {
    const m = results.mcpSearch;
    const worst = Math.max(...m.queries.map((q) => q.ms.p50 ?? Infinity));
    results.targets.push({ target: `mcp search_messages over ${m.records} records p50 <= 300 ms (slowest query)`, value: String(worst), verdict: worst <= 300 ? "PASS" : "FAIL" });
    results.targets.push({ target: "mcp server RSS growth <= 2x the log's size (right after the tool calls)", value: `${m.memoryRatio} (settled ${m.settledRatio}x; live heap ${m.liveHeapRatio}x)`, verdict: m.memoryRatio === null ? "SKIP" : m.memoryRatio <= 2 ? "PASS" : "FAIL" });
  }
  if (results.hostile && !("skipped" in results.hostile)) {
    for (const x of results.hostile.attacks) {
      results.targets.push({ target: `issue 33 row ${x.row}: adds <= ${x.targetMiB} MiB, /healthz max <= 250 ms, no crash, other client >= 0.8x`, value: `${x.rssOverQuietMiB} MiB, ${x.healthzMaxMs} ms, ${x.crashed ? "crash" : "up"}, ${x.otherRatio}x`, verdict: x.verdict });
    }
  }
  if (results.state && !("skipped" in results.state)) results.targets.push(...stateTargets(results.state));
  process.stdout.write(`\nmcp-wiretap bench — ${results.date}\n`);
  process.stdout.write(`${results.machine.cpu}, ${results.machine.cores} cores, ${results.machine.memoryGiB} GiB, Node ${results.machine.node}, load average ${results.machine.loadAverageAtStart.join(" ")} at start${options.quick ? " — QUICK RUN" : ""}\n\n`);
  process.stdout.write(`${table(results)}\n`);
  for (const p of results.paths) {
    for (const f of p.failures) process.stdout.write(`\n${p.name} failure: ${f}`);
  }
  const st = results.stdio;
  if (st && !("skipped" in st)) {
    const l = st.latency;
    const u = st.sustained;
    process.stdout.write(
      `\nstdio shim vs direct pipe (${l.messages} round trips): direct p50 ${l.direct.p50} ms p99 ${l.direct.p99} ms; shim p50 ${l.shim.p50} ms p99 ${l.shim.p99} ms; ` +
        `added p50 ${l.addedP50Ms} ms p99 ${l.addedP99Ms} ms\n` +
        `stdio sustained: ${u.sent} requests at ${u.achievedRate} msg/s for ${u.seconds} s, ${u.answered} answered, ${u.rpcRecords} rpc records, ${u.missingRecords} missing\n`,
    );
  } else if (st) process.stdout.write(`\nstdio: skipped (${st.skipped})\n`);
  const mk = results.mock;
  if (mk && !("skipped" in mk)) {
    process.stdout.write(`mock --stdio vs the stdio echo server (${mk.messages} round trips each): direct p50 ${mk.direct.p50} ms p99 ${mk.direct.p99} ms; mock p50 ${mk.mock.p50} ms p99 ${mk.mock.p99} ms\n`);
  } else if (mk) process.stdout.write(`mock: skipped (${mk.skipped})\n`);
  const rp = results.replay;
  if (rp && !("skipped" in rp)) {
    process.stdout.write(`replay vs direct SDK call (${rp.rounds} each, fresh session each): direct median ${rp.direct.p50} ms; replay median ${rp.replay.p50} ms (p99 ${rp.replay.p99} ms); added ${rp.addedMedianMs} ms\n`);
  } else if (rp) process.stdout.write(`replay: skipped (${rp.skipped})\n`);
  const ms = results.mcpSearch;
  if (ms && !("skipped" in ms)) {
    const rows = ms.queries.map((q) => `  ${JSON.stringify(q.query).padEnd(32)} p50 ${q.ms.p50} ms  p95 ${q.p95} ms  max ${q.ms.max} ms  (${q.hits} hits, ${q.scanned} records scanned)`).join("\n");
    const others = ms.tools.map((t) => `  ${t.tool.padEnd(32)} first ${t.firstMs} ms, then p50 ${t.ms.p50} ms`).join("\n");
    process.stdout.write(`\nmcp search_messages over ${ms.records} records (${ms.logMiB} MiB; served after ${ms.loadMs} ms):\n${rows}\n${others}\n  server RSS ${ms.rssMiB} MiB (${ms.emptyRssMiB} MiB on an empty log): ${ms.memoryRatio}x the log's size; settled ${ms.settledRssMiB} MiB: ${ms.settledRatio}x; live heap ${ms.liveHeapRatio}x\n`);
  } else if (ms) process.stdout.write(`\nmcp search: skipped (${ms.skipped})\n`);
  const sr = results.state;
  if (sr && !("skipped" in sr)) process.stdout.write(`\nShared state (issue 31): one proxy per Redis placement, counted = echo calls a limit counts in Redis:\n${stateTable(sr)}\n`);
  else if (sr) process.stdout.write(`\nshared state: skipped (${sr.skipped})\n`);
  const h = results.hostile;
  if (h && !("skipped" in h)) process.stdout.write(`\nOne hostile peer (issue 33), each attack on a fresh proxy beside another client:\n${hostileTable(h)}\n`);
  else if (h) process.stdout.write(`\nhostile peer: skipped (${h.skipped})\n`);
  if (results.notes.length) process.stdout.write(`\nNotes:\n${results.notes.map((n) => `  - ${n}`).join("\n")}\n`);
  writeResults(RESULTS_FILE, results);
  process.stdout.write(`\nwritten: ${path.relative(process.cwd(), RESULTS_FILE)} (${results.durationSeconds} s)\n`);
}

const watchdog = setTimeout(() => {
  results.notes.push(`the bench hit its ${WATCHDOG_MS / 1000} s watchdog; the figures above are partial`);
  progress("watchdog: stopping");
  try {
    finish();
  } finally {
    process.exit(1);
  }
}, WATCHDOG_MS + HOSTILE_MS + STATE_MS + STARTUP_MS);
watchdog.unref();

async function closeDispatcher(dispatcher: Dispatcher): Promise<void> {
  try {
    await within(5000, "closing the client", dispatcher.close());
  } catch {
    await dispatcher.destroy().catch(() => undefined);
  }
}

async function withDispatcher<T>(p: RunningPath, opts: Parameters<typeof dispatcherFor>[1], use: (d: Dispatcher) => Promise<T>): Promise<T> {
  const dispatcher = dispatcherFor(p, opts);
  try {
    return await use(dispatcher);
  } finally {
    await closeDispatcher(dispatcher);
  }
}

async function measurePath(p: RunningPath, direct: RunningPath, r: PathResult, upstream: Upstream, origin: string, measures: Measure[]): Promise<void> {
  const child = p.child;
  const alive = (): boolean => !child || child.alive;
  const step = async (what: string, run: () => Promise<void>): Promise<void> => {
    if (!alive()) return;
    progress(`${p.name}: ${what}`);
    try {
      await run();
    } catch (err) {
      r.failures.push(`${what}: ${errorText(err)}`);
    }
    if (!alive()) r.failures.push(`${p.name} process died during "${what}": ${JSON.stringify(child?.exit)}; stderr: ${child?.stderr.trim().slice(-2000)}`);
  };

  if (measures.includes("sse")) {
    await step(`SSE latency (${d.sseEvents} events every ${d.sseIntervalMs} ms)`, () =>
      withDispatcher(p, { bodyTimeoutMs: 0 }, (dispatcher) =>
        // Through a proxy, a direct copy of the same events arrives alongside (see sse-latency.ts).
        withDispatcher(direct, { bodyTimeoutMs: 0 }, async (directDispatcher) => {
          const sseOptions = { count: d.sseEvents, intervalMs: d.sseIntervalMs };
          r.sse = await runSseLatency(dispatcher, origin, p.proxy ? { ...sseOptions, direct: directDispatcher } : sseOptions);
          if (r.sse.errors.total) r.failures.push(`SSE latency: ${JSON.stringify(r.sse.errors.messages)}`);
        }),
      ),
    );
  }
  if (measures.includes("handshake")) {
    await step(`new-host handshakes (${upstream.extra.length} hosts)`, () =>
      withDispatcher(p, { connections: 1 }, async (dispatcher) => {
        r.handshake = await runHandshakes(p, upstream.extra, dispatcher, origin, Math.max(2000, allowance(15_000, 10_000)));
        if (r.handshake.errors.total) r.failures.push(`new-host handshakes: ${JSON.stringify(r.handshake.errors.messages)}`);
      }),
    );
  }
  if (measures.includes("memory")) {
    await step(`${d.bigMiB} MiB response`, () =>
      withDispatcher(p, { headersTimeoutMs: d.bigTimeoutMs, bodyTimeoutMs: d.bigTimeoutMs }, async (dispatcher) => {
        const timeoutMs = allowance(p.name === "direct" || p.name === "mcp-wiretap" ? d.bigTimeoutMs : d.bigTimeoutPeersMs, p.proxy ? 5000 : 0);
        if (timeoutMs < 2000) throw new Error("skipped: the run's time budget is used up");
        r.big = await runBigResponse(dispatcher, origin, child, d.bigMiB, timeoutMs);
        if (r.big.errors.total) r.failures.push(`${d.bigMiB} MiB response: ${JSON.stringify(r.big.errors.messages)}`);
      }),
    );
    if (p.proxy) {
      await step(`${d.streams} open SSE streams`, async () => {
        const dispatcher = dispatcherFor(p, { bodyTimeoutMs: 0, headersTimeoutMs: 0 });
        const timeoutMs = allowance(p.name === "mcp-wiretap" ? d.streamsTimeoutMs : d.streamsTimeoutPeersMs);
        try {
          if (timeoutMs < 3000) throw new Error("skipped: the run's time budget is used up");
          r.streams = await runOpenStreams(dispatcher, origin, upstream, child, { count: d.streams, batch: 100, timeoutMs });
          if (r.streams.errors.total) r.failures.push(`open SSE streams: ${JSON.stringify(r.streams.errors.messages)}`);
          if (r.streams.openAtUpstream < d.streams || r.streams.firstEventAtClient < d.streams) {
            r.failures.push(`open SSE streams: ${r.streams.openAtUpstream}/${d.streams} reached the upstream and ${r.streams.firstEventAtClient}/${d.streams} first events reached the client within ${timeoutMs / 1000} s`);
          }
        } finally {
          await dispatcher.destroy().catch(() => undefined);
          const closed = await waitFor(() => upstream.openHolds === 0, 3000, 50);
          if (r.streams) r.streams.upstreamStillOpen3sAfterClientsClosed = upstream.openHolds;
          if (!closed) r.failures.push(`open SSE streams: ${upstream.openHolds} upstream streams still open 3 s after the clients closed theirs`);
        }
      });
    }
  }
}

function emptyResult(name: PathName): PathResult {
  return { name, skipped: null, startupMs: null, rssIdleMiB: null, load: [], sse: null, handshake: null, big: null, streams: null, failures: [], stderrTail: null };
}

/** Small tools/call requests at c=1, 8, 32 and c=8 answered as SSE, every running path in turn. */
async function measureThroughput(paths: RunningPath[], byName: Map<PathName, PathResult>, upstream: Upstream, origin: string): Promise<void> {
  const dispatchers = paths.map((p) => ({ path: p, dispatcher: dispatcherFor(p, {}) }));
  const alive = (p: RunningPath): boolean => !p.child || p.child.alive;
  try {
    const configs = [
      { concurrency: 1, sseAnswer: false, durationMs: d.loadMsOther },
      { concurrency: 8, sseAnswer: false, durationMs: d.loadMs },
      { concurrency: 32, sseAnswer: false, durationMs: d.loadMsOther },
      { concurrency: 8, sseAnswer: true, durationMs: d.sseAnswerLoadMs },
    ];
    const loads = await runInterleavedLoad(dispatchers, configs, { rounds: d.loadRounds, warmupMs: d.warmupMs, origin, upstream, alive, progress });
    for (const p of paths) {
      const r = byName.get(p.name)!;
      r.load = loads.get(p) ?? [];
      for (const l of r.load) {
        if (l.errors.total) r.failures.push(`tools/call c=${l.concurrency}${l.answer === "sse" ? " (SSE)" : ""}: ${l.errors.total} errors: ${JSON.stringify(l.errors.messages)}`);
      }
      if (!alive(p)) r.failures.push(`${p.name} process died during the load runs: ${JSON.stringify(p.child?.exit)}; stderr: ${p.child?.stderr.trim().slice(-2000)}`);
    }
  } finally {
    await Promise.all(dispatchers.map((t) => closeDispatcher(t.dispatcher)));
  }
}

/** Log completeness, on a fresh mcp-wiretap instance (run right after the mcp-wiretap path). */
async function measureLogging(ctx: BenchContext, origin: string, upstream: Upstream): Promise<void> {
  progress(`mcp-wiretap: logging completeness (${d.logRate} JSON-RPC messages/s for ${d.logSeconds} s, fresh instance)`);
  try {
    const p = await startWiretap(ctx);
    await withDispatcher(p, { connections: LOG_CONNECTIONS }, async (dispatcher) => {
      const logging = await runLogging(p, dispatcher, origin, upstream, { rate: d.logRate, seconds: d.logSeconds, maxInFlight: 256, progress: LOG_PROGRESS });
      logging.connections = LOG_CONNECTIONS;
      results.logging = logging;
    });
    await p.stop();
  } catch (err) {
    results.logging = { skipped: `failed: ${errorText(err)}` };
  }
}

async function main(): Promise<void> {
  if (options.measures.includes("stdio")) {
    // First, and on its own: it needs neither the PKI nor the upstream, and takes a few seconds.
    progress(`stdio shim: ${d.stdioMessages} round trips against a direct pipe, then ${d.stdioRate} msg/s for ${d.stdioSeconds} s`);
    results.stdio = await runStdio(tmp, { messages: d.stdioMessages, rounds: d.stdioRounds, rate: d.stdioRate, seconds: d.stdioSeconds }).catch((err: unknown) => ({ skipped: `failed: ${errorText(err)}` }));
    progress(`mock --stdio: ${d.stdioMessages} round trips beside the stdio echo server`);
    results.mock = await runMock(tmp, { messages: d.stdioMessages, rounds: d.stdioRounds }).catch((err: unknown) => ({ skipped: `failed: ${errorText(err)}` }));
  }
  if (options.measures.includes("replay")) {
    progress(`replay: ${d.replayRounds} replays of a captured echo call beside the same call made with the SDK`);
    results.replay = await runReplay(tmp, { rounds: d.replayRounds }).catch((err: unknown) => ({ skipped: `failed: ${errorText(err)}` }));
  }
  if (options.measures.includes("mcp")) {
    progress("mcp: search_messages over a 100,000-record log");
    results.mcpSearch = await runMcpSearch(tmp).catch((err: unknown) => ({ skipped: `failed: ${errorText(err)}` }));
  }
  const extraHosts = Array.from({ length: d.newHosts }, (_, i) => `127.0.0.${i + 2}`);
  progress(`temp dir ${tmp}; creating the bench PKI and the upstream`);
  const pki = createBenchPki(tmp, ["127.0.0.1", ...extraHosts]);
  const upstream = await startUpstream({ cert: pki.certPem, key: pki.keyPem, extraHosts });
  const ctx: BenchContext = { tmp, benchCaFile: pki.caFile, benchCaPem: pki.caPem, cpuProfDir: options.cpuProfDir, baseDir: options.baseDir };
  if (options.cpuProfDir) results.notes.push(`CPU profiles of the Node proxies were written to ${options.cpuProfDir} (profiling slows them down: do not compare these figures)`);
  const localhost = await lookup("localhost", { family: 4 }).catch(() => null);
  const host = localhost?.address === "127.0.0.1" ? "localhost" : "127.0.0.1";
  const origin = `https://${host}:${upstream.main.port}`;
  if (host !== "localhost") results.notes.push("localhost does not resolve to 127.0.0.1 here: the main upstream was addressed as 127.0.0.1 (no SNI)");

  const busy = os.loadavg()[0] ?? 0;
  if (busy > os.cpus().length * 0.5) {
    results.notes.push(
      `the machine was busy when the run started (1-minute load average ${busy.toFixed(2)} on ${os.cpus().length} cores): ` +
        "the bench's client, upstream and proxies shared the CPU with other work; compare figures only within this run",
    );
  }
  const direct = await startPath("direct", ctx);
  const wantLogging = options.measures.includes("logging");
  if (wantLogging && !options.paths.includes("mcp-wiretap")) results.logging = { skipped: "mcp-wiretap not selected" };
  const byName = new Map<PathName, PathResult>(options.paths.map((name) => [name, emptyResult(name)]));
  const running = new Map<PathName, RunningPath>([["direct", direct]]);
  const start = async (name: PathName): Promise<void> => {
    const r = byName.get(name)!;
    progress(`${name}: starting`);
    try {
      const p = await startPath(name, ctx);
      r.startupMs = round(p.startupMs, 0);
      await sleep(300);
      r.rssIdleMiB = round(p.child?.rssMiB() ?? null, 1);
      running.set(name, p);
    } catch (err) {
      r.skipped = err instanceof PathUnavailable ? err.message : errorText(err);
      if (!(err instanceof PathUnavailable)) r.failures.push(`start: ${errorText(err)}`);
      results.notes.push(`${name}: ${r.skipped}`);
      if (name === "mcp-wiretap" && wantLogging) results.logging = { skipped: "mcp-wiretap did not start" };
    }
  };

  // Throughput first, with every path up at once: their windows are interleaved (see throughput.ts).
  const startedAll = options.measures.includes("throughput");
  if (startedAll) {
    for (const name of options.paths) if (!running.has(name)) await start(name);
    await measureThroughput(options.paths.flatMap((n) => running.get(n) ?? []), byName, upstream, origin);
  }
  for (const [i, name] of options.paths.entries()) {
    reserveMs = estimateReserve(options.paths.length - i - 1, wantLogging && options.paths.indexOf("mcp-wiretap") >= i);
    const r = byName.get(name)!;
    results.paths.push(r);
    if (!startedAll && !running.has(name)) await start(name);
    const p = running.get(name);
    if (!p) continue;
    await measurePath(p, direct, r, upstream, origin, VARIANT_PATHS.has(name) ? [] : options.measures.filter((m) => m !== "logging" && m !== "throughput"));
    const stop = await p.stop();
    if (stop) r.failures.push(stop);
    if (p.child) r.stderrTail = p.child.stderr.trim().slice(-4000) || null;
    if (p.logFile) {
      const log = countLog(p.logFile);
      for (const [event, samples] of Object.entries(log.problems)) {
        r.failures.push(`log has ${event} warnings/errors, e.g.: ${samples.join("\n    ")}`);
      }
    }
    if (name === "mcp-wiretap" && wantLogging) await measureLogging(ctx, origin, upstream);
  }

  if (options.measures.includes("state")) {
    results.state = await runState(ctx, origin, { windowMs: d.stateWindowMs, warmupMs: d.warmupMs, progress }).catch((err: unknown) => ({ skipped: `failed: ${errorText(err)}` }));
  }
  await upstream.close();
  if (options.measures.includes("hostile")) {
    results.hostile = await runHostile({ tmp, cpuProfDir: options.cpuProfDir, secondsPerAttack: d.hostileSeconds, scale: d.hostileScale, ...(options.hostileRows ? { rows: options.hostileRows } : {}), progress }).catch((err: unknown) => ({
      skipped: `failed: ${errorText(err)}`,
    }));
  }
  finish();
  if (options.measures.includes("startup")) await runStartup();
}

/** bench/stdio-startup.ts, its tables and verdicts printed after this run's (it writes no results.json entry). */
async function runStartup(): Promise<void> {
  progress("stdio start-up: launches of the bare server and of the wrapped one, interleaved");
  const args = [path.join(REPO, "bench", "stdio-startup.ts"), "--launches", options.quick ? "5" : "20", ...(options.baseDir ? ["--base", options.baseDir] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"] });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (code !== 0) process.stdout.write(`\nstdio start-up: the section exited with ${code}\n`);
}

await main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
