/**
 * Issue 33: the proxy's memory and `/healthz` latency while one hostile peer runs each attack of the issue
 * (bench/hostile-attacks.ts), side by side with a quiet run, each on a fresh proxy over plain HTTP on loopback.
 * Meanwhile another client sends small tools/call requests to a benign upstream (its throughput, against the
 * quiet run's, is the ratio), and `/healthz` is probed every 50 ms. Targets (the issue's): one hostile peer adds
 * at most 64 MiB (256 MiB for 40 unterminated 8 MiB streams), `/healthz` max ≤ 250 ms, no crash, the other
 * client's throughput ≥ 0.8 × quiet.
 *
 * The hostile peer's client side connects from 127.0.0.2 (bench/hostile-attacks.ts), the other client from
 * 127.0.0.1: a real hostile client has an address of its own, and the proxy shares its event loop by peer
 * (src/proxy/read-scheduler.ts). The hostile and the benign upstreams are two peers by their ports. The proxy's
 * CPU use over the window (share of one core) is shown beside, to tell a loop the other client could not get
 * from one the attack left idle.
 */
import { fork, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import { Child } from "./child.ts";
import { ATTACKS, startHostileUpstream, type Attack } from "./hostile-attacks.ts";
import type { AttackOrder } from "./hostile-peer.ts";
import { nodeFlags, REPO } from "./paths.ts";
import { percentile, round } from "./stats.ts";
import { nowMs, sleep } from "./time.ts";

const WIRETAP_MAIN = path.join(REPO, "dist", "cli", "main.js");
const PROBE_EVERY_MS = 50;
const HEALTHZ_MAX_MS = 250;
const THROUGHPUT_RATIO = 0.8;

export interface HostileRow {
  row: number;
  attack: string;
  done: string;
  seconds: number;
  rssBeforeMiB: number | null;
  rssAddedMiB: number | null;
  /** Peak RSS over the quiet run's peak (the other client's own cost taken out): what the hostile peer adds. */
  rssOverQuietMiB: number | null;
  healthzP50Ms: number | null;
  healthzMaxMs: number | null;
  healthzFailed: number;
  otherRequestsPerSec: number | null;
  otherRatio: number | null;
  /** The proxy's CPU time over the window, as a share of one core. */
  proxyCpu: number | null;
  crashed: boolean;
  targetMiB: number;
  verdict: "PASS" | "FAIL";
}

export interface HostileResult {
  quiet: HostileRow;
  attacks: HostileRow[];
}

export interface HostileOptions {
  tmp: string;
  /** `--cpu-prof DIR`: a V8 CPU profile of each proxy under attack, or null. */
  cpuProfDir?: string | null;
  /** Longest an attack may run (it stops there and says how far it got). */
  secondsPerAttack: number;
  /** 1: the issue's sizes; less shrinks the counts. */
  scale: number;
  /** Rows to run (default all). */
  rows?: number[];
  progress(msg: string): void;
}

export async function runHostile(opts: HostileOptions): Promise<HostileResult> {
  const hostile = await startHostilePeer();
  const benign = await startHostileUpstream();
  try {
    const quiet = await measure(opts, null, hostile, benign.port);
    const attacks: HostileRow[] = [];
    for (const attack of ATTACKS.filter((a) => !opts.rows || opts.rows.includes(a.row))) {
      attacks.push(await measure(opts, attack, hostile, benign.port, quiet));
    }
    return { quiet, attacks };
  } finally {
    hostile.close();
    benign.close();
  }
}

interface HostilePeer {
  run(order: AttackOrder): Promise<string>;
  close(): void;
}

/** The hostile upstream and attacks in a child process (bench/hostile-peer.ts): their CPU is not the measuring loop's. */
async function startHostilePeer(): Promise<HostilePeer> {
  const child: ChildProcess = fork(path.join(REPO, "bench", "hostile-peer.ts"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`the hostile peer exited (${code}) before listening`)));
  });
  return {
    run: (order) =>
      new Promise((resolve) => {
        const onExit = (): void => resolve("failed: the hostile peer exited");
        child.once("exit", onExit);
        child.once("message", (m: { done: string }) => {
          child.off("exit", onExit);
          resolve(m.done);
        });
        child.send(order);
      }),
    close: () => child.disconnect(),
  };
}

async function measure(opts: HostileOptions, attack: Attack | null, hostile: HostilePeer, benignPort: number, quiet: HostileRow | null = null): Promise<HostileRow> {
  const name = attack ? `row ${attack.row}: ${attack.name}` : "quiet";
  opts.progress(`hostile peer, ${name}`);
  const proxy = await startProxy(opts, attack?.proxyArgs);
  try {
    await sleep(500);
    const before = proxy.child.rssMiB();
    let peak = before ?? 0;
    const sampler = setInterval(() => (peak = Math.max(peak, proxy.child.rssMiB() ?? 0)), 20);
    const probes = probeHealth(proxy.port);
    const other = otherClient(proxy.port, benignPort);
    const started = nowMs();
    const cpuBefore = proxy.child.cpuSeconds();
    const deadline = started + opts.secondsPerAttack * 1000;
    let done = "idle";
    try {
      done = attack ? await hostile.run({ row: attack.row, proxyPort: proxy.port, ...(proxy.uiFeed ? { uiFeed: proxy.uiFeed } : {}), msLeft: deadline - nowMs(), scale: opts.scale }) : "";
    } catch (err) {
      done = `failed: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (!attack) await sleep(Math.max(0, deadline - nowMs()));
    // What is held after the attack counts too (a table that keeps what it saw).
    await sleep(500);
    const seconds = (nowMs() - started) / 1000;
    clearInterval(sampler);
    const cpuAfter = proxy.child.cpuSeconds();
    peak = Math.max(peak, proxy.child.rssMiB() ?? 0);
    const latencies = await probes.stop();
    const requests = await other.stop();
    const rate = requests / seconds;
    const crashed = !proxy.child.alive;
    const added = before === null ? null : peak - before;
    const quietPeak = quiet?.rssBeforeMiB != null && quiet.rssAddedMiB != null ? quiet.rssBeforeMiB + quiet.rssAddedMiB : null;
    const overQuiet = quietPeak === null ? added : peak - quietPeak;
    const ratio = quiet?.otherRequestsPerSec ? rate / quiet.otherRequestsPerSec : null;
    const targetMiB = attack?.targetMiB ?? 64;
    const ok = !crashed && overQuiet !== null && overQuiet <= targetMiB && (latencies.max ?? Infinity) <= HEALTHZ_MAX_MS && (ratio === null || ratio >= THROUGHPUT_RATIO);
    return {
      row: attack?.row ?? 0,
      attack: attack?.name ?? "quiet (no hostile peer)",
      done,
      seconds: round(seconds, 1) ?? 0,
      rssBeforeMiB: round(before, 1),
      rssAddedMiB: round(added, 1),
      rssOverQuietMiB: round(overQuiet, 1),
      healthzP50Ms: round(latencies.p50, 1),
      healthzMaxMs: round(latencies.max, 1),
      healthzFailed: latencies.failed,
      otherRequestsPerSec: round(rate, 1),
      otherRatio: round(ratio, 2),
      proxyCpu: cpuBefore === null || cpuAfter === null ? null : round((cpuAfter - cpuBefore) / seconds, 2),
      crashed,
      targetMiB,
      verdict: ok ? "PASS" : "FAIL",
    };
  } finally {
    await proxy.child.stop();
  }
}

async function startProxy({ tmp, cpuProfDir }: HostileOptions, args?: "enforce" | "ui"): Promise<{ child: Child; port: number; uiFeed?: string }> {
  const n = ++instances;
  const extra: string[] = [];
  if (args === "enforce") {
    const policy = path.join(tmp, `hostile-enforce-${n}.yaml`);
    writeFileSync(policy, "mode: enforce\n", { mode: 0o600 });
    extra.push("--config", policy);
  }
  if (args === "ui") extra.push("--ui-port", "0");
  const child = new Child("mcp-wiretap", process.execPath, [...nodeFlags({ cpuProfDir: cpuProfDir ?? null }), WIRETAP_MAIN, "start", "--port", "0", "--ca-dir", path.join(tmp, `hostile-ca-${n}`), "--log-file", path.join(tmp, `hostile-${n}.log`), ...extra]);
  const listening = await child.waitForOutput(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 30_000);
  if (!listening) throw new Error(`mcp-wiretap did not start: ${child.stderr.trim().slice(-1000)}`);
  const ui = args === "ui" ? await child.waitForOutput(/UI: (http:\/\/\S+)\?token=(\S+)/, 10_000) : null;
  const uiFeed = ui ? `${ui[1]!.replace(/\/$/, "")}/api/feed?token=${ui[2]}` : undefined;
  return { child, port: Number(listening[1]), ...(uiFeed ? { uiFeed } : {}) };
}
let instances = 0;

/** `/healthz` every 50 ms, one at a time, each on a fresh connection; a probe that fails counts as failed. */
function probeHealth(port: number): { stop(): Promise<{ p50: number | null; max: number | null; failed: number }> } {
  const latencies: number[] = [];
  let failed = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = nowMs();
      const ok = await new Promise<boolean>((resolve) => {
        const req = http.get({ host: "127.0.0.1", port, path: "/healthz", agent: false, timeout: 30_000 }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode === 200));
        });
        req.on("timeout", () => req.destroy());
        req.on("error", () => resolve(false));
      });
      if (ok) latencies.push(nowMs() - t0);
      else failed++;
      await sleep(Math.max(0, PROBE_EVERY_MS - (nowMs() - t0)));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const sorted = [...latencies].sort((a, b) => a - b);
      return { p50: percentile(sorted, 50), max: sorted.at(-1) ?? null, failed };
    },
  };
}

/** Another client: small tools/call requests, four at a time, to the benign upstream; counts the answers. */
function otherClient(proxyPort: number, upstreamPort: number): { stop(): Promise<number> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let answered = 0;
  let running = true;
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "hi" } } });
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const req = http.request(
        { host: "127.0.0.1", port: proxyPort, method: "POST", path: `http://127.0.0.1:${upstreamPort}/answer`, agent, timeout: 30_000, headers: { "content-type": "application/json", "mcp-protocol-version": "2025-11-25" } },
        (res) => {
          res.resume();
          res.on("end", () => {
            if (res.statusCode === 200) answered++;
            resolve();
          });
        },
      );
      req.on("timeout", () => req.destroy());
      req.on("error", () => resolve());
      req.end(body);
    });
  const workers = Array.from({ length: 4 }, async () => {
    while (running) await one();
  });
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      for (const s of Object.values(agent.sockets).flat()) (s as net.Socket | undefined)?.destroy();
      agent.destroy();
      return answered;
    },
  };
}

/** The section's table, for the bench's report. */
export function hostileTable(r: HostileResult): string {
  const rows = [r.quiet, ...r.attacks];
  const head = "row | attack | done | RSS growth MiB | over quiet MiB (target) | /healthz p50 / max ms | other client req/s (× quiet) | proxy CPU | crash | verdict";
  const lines = rows.map(
    (x) =>
      `${x.row || "-"} | ${x.attack} | ${x.done || "-"} | ${x.rssAddedMiB ?? "?"} | ${x.row ? `${x.rssOverQuietMiB ?? "?"} (≤ ${x.targetMiB})` : "-"} | ${x.healthzP50Ms ?? "?"} / ${x.healthzMaxMs ?? "?"}${x.healthzFailed ? ` (${x.healthzFailed} failed)` : ""} | ${x.otherRequestsPerSec ?? "?"}${x.otherRatio !== null ? ` (${x.otherRatio})` : ""} | ${x.proxyCpu ?? "?"} | ${x.crashed ? "CRASH" : "no"} | ${x.row ? x.verdict : ""}`,
  );
  return [head, ...lines].join("\n");
}
