/**
 * `npm run bench:stdio-startup`: what a client pays to launch a server through `mcp-wiretap stdio`, side by
 * side with the bare server (bench/stdio-echo-server.ts), launches interleaved so a drift of the machine
 * falls on all variants: time from spawn to the answer to the first request, and the wrapper's resident
 * memory after the first answer and after 1,000 messages (Linux: /proc). Variants: `node -e 0` (spawn to exit,
 * the floor any Node process pays); the bare server; through
 * `mcp-wiretap stdio` launched as `wrap` writes it (node's options of startup/node-flags.ts, its compile
 * cache in a per-run folder, warmed by a first launch); the same without the node options (as typed by
 * hand); with the cache off (NODE_DISABLE_COMPILE_CACHE=1); with --base DIR, the build of another checkout (its
 * dist/cli/main.js, say of the main branch, launched as `wrap` writes it) for a before/after in one run. Options: --launches N (default 20),
 * --base DIR.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { WRAPPED_NODE_FLAGS } from "../src/startup/node-flags.ts";
import { REPO } from "./paths.ts";
import { percentile, round } from "./stats.ts";

const MAIN = path.join(REPO, "dist", "cli", "main.js");
const ECHO = path.join(REPO, "bench", "stdio-echo-server.ts");
const option = (name: string): string | undefined => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const launches = Number(option("--launches")) || 20;
const base = option("--base");
const BASE_MAIN = base === undefined ? null : path.join(path.resolve(base), "dist", "cli", "main.js");
const tmp = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-startup-"));

type Variant = "node -e 0" | "bare" | "wrapped" | "wrapped, no node flags" | "wrapped, no compile cache" | "wrapped@base";

interface Sample {
  firstAnswerMs: number;
  /** CPU time (user + system) of the process launched, at the first answer: less at the mercy of the machine's load. */
  cpuFirstMs: number | null;
  rssFirstMiB: number | null;
  rss1000MiB: number | null;
}

/** /proc/PID/stat's utime + stime, in ms (Linux counts them in ticks of 10 ms: a median over launches). */
function cpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

function rssMiB(pid: number | undefined): number | null {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

/** The floor: a Node process that does nothing, spawn to exit (what any Node server or wrapper pays first). */
async function nodeFloor(): Promise<Sample> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await new Promise((resolve) => child.once("close", resolve));
  return { firstAnswerMs: performance.now() - t0, cpuFirstMs: null, rssFirstMiB: null, rss1000MiB: null };
}

async function launch(variant: Variant, n: number): Promise<Sample> {
  if (variant === "node -e 0") return nodeFloor();
  const main = variant === "wrapped@base" ? BASE_MAIN! : MAIN;
  const flags = variant === "wrapped" || variant === "wrapped, no compile cache" || variant === "wrapped@base" ? WRAPPED_NODE_FLAGS : [];
  const args = variant === "bare" ? [ECHO] : [...flags, main, "stdio", "--name", "bench", "--log-file", path.join(tmp, `launch-${n}.ndjson`), "--ca-dir", path.join(tmp, "pins"), "--", process.execPath, ECHO];
  // A compile cache per variant: V8 rejects code cached under other flags, and variants sharing one cache
  // would each find the other's and compile afresh every launch.
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: path.join(tmp, `cache-${variant}`), ...(variant === "wrapped, no compile cache" ? { NODE_DISABLE_COMPILE_CACHE: "1" } : {}) };
  delete env.NODE_OPTIONS;
  delete env.NODE_COMPILE_CACHE;
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"], env });
  let answers = 0;
  let wanted = 1;
  let onAnswers: () => void = () => {};
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    answers += chunk.split("\n").length - 1;
    if (answers >= wanted) onAnswers();
  });
  const until = (count: number): Promise<void> =>
    new Promise((resolve) => {
      wanted = count;
      onAnswers = resolve;
      if (answers >= count) resolve();
    });
  const request = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}\n`;
  child.stdin.write(request(0));
  await until(1);
  const firstAnswerMs = performance.now() - t0;
  const cpuFirstMs = cpuMs(child.pid);
  const rssFirstMiB = variant === "bare" ? null : rssMiB(child.pid);
  let batch = "";
  for (let id = 1; id <= 1000; id++) batch += `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"m${id}"}}}\n`;
  child.stdin.write(batch);
  await until(1001);
  const rss1000MiB = rssMiB(child.pid);
  child.stdin.end();
  await new Promise((resolve) => child.once("close", resolve));
  return { firstAnswerMs, cpuFirstMs, rssFirstMiB, rss1000MiB };
}

const variants: Variant[] = ["node -e 0", "bare", "wrapped", "wrapped, no node flags", "wrapped, no compile cache", ...(BASE_MAIN ? (["wrapped@base"] as const) : [])];
const samples = new Map<Variant, Sample[]>(variants.map((v) => [v, []]));
// Warms the compile caches, as any earlier launch would; not counted.
for (const v of variants) if (v !== "bare" && v !== "node -e 0") await launch(v, -1);
for (let i = 0; i < launches; i++) for (const v of variants) samples.get(v)!.push(await launch(v, i));

const stat = (xs: Array<number | null>, p: number): number | null => {
  const sorted = xs.filter((x): x is number => x !== null).sort((a, b) => a - b);
  const value = percentile(sorted, p);
  return value === null ? null : round(value, 1);
};
const bare = samples.get("bare")!;
const rows = variants.map((v) => {
  const s = samples.get(v)!;
  const p50 = stat(s.map((x) => x.firstAnswerMs), 50);
  const bareP50 = stat(bare.map((x) => x.firstAnswerMs), 50)!;
  return {
    variant: v,
    firstAnswerP50Ms: p50,
    firstAnswerP90Ms: stat(s.map((x) => x.firstAnswerMs), 90),
    addedP50Ms: v === "bare" || v === "node -e 0" || p50 === null ? null : round(p50 - bareP50, 1),
    // The bare row: the server's; the others: the wrapper's alone.
    cpuFirstP50Ms: stat(s.map((x) => x.cpuFirstMs), 50),
    // The bare row: the server's own RSS; the others: the wrapper's (its server runs beside it).
    rssFirstP50MiB: stat(s.map((x) => x.rssFirstMiB), 50),
    rss1000P50MiB: stat(s.map((x) => x.rss1000MiB), 50),
  };
});
process.stdout.write(`stdio start-up, ${launches} launches each, interleaved (Node ${process.versions.node}, load ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs)\n`);
console.table(rows);
// Issue 25's targets, for the launch as `wrap` writes it.
const wrapped = rows.find((r) => r.variant === "wrapped")!;
const verdict = (value: number | null, limit: number): string => (value === null ? "SKIP" : value <= limit ? "PASS" : "FAIL");
process.stdout.write(`target: added time to the first answer p50 <= 60 ms: ${wrapped.addedP50Ms} ms (the floor, node -e 0: ${rows[0]!.firstAnswerP50Ms} ms) ${verdict(wrapped.addedP50Ms, 60)}\n`);
process.stdout.write(`target: wrapper RSS after 1,000 messages p50 <= 60 MiB: ${wrapped.rss1000P50MiB} MiB ${verdict(wrapped.rss1000P50MiB, 60)}\n`);

// `start` to its listening line, and `run` to the first line its command prints (the proxy is up before the
// command starts): this build and, with --base, the other one, interleaved.
type Other = { command: "start" | "run"; build: "this build" | "base" };
async function commandStartMs({ command, build }: Other, n: number): Promise<number> {
  const main = build === "base" ? BASE_MAIN! : MAIN;
  const common = ["--port", "0", "--ca-dir", path.join(tmp, "ca"), "--log-file", path.join(tmp, `${command}-${n}.ndjson`)];
  const args = command === "start" ? [main, "start", ...common] : [main, "run", ...common, "--", process.execPath, "-e", "console.log('command up')"];
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: path.join(tmp, "cache") };
  delete env.NODE_OPTIONS;
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env });
  const wanted = command === "start" ? /listening on/ : /command up/;
  let seen = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} (${build}): no start line in 30 s`)), 30_000);
    const look = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (wanted.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", look);
    child.stderr.on("data", look);
  });
  const ms = performance.now() - t0;
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("close", resolve));
  return ms;
}
const others: Other[] = (["start", "run"] as const).flatMap((command) => [{ command, build: "this build" as const }, ...(BASE_MAIN ? [{ command, build: "base" as const }] : [])]);
const otherSamples = others.map(() => [] as number[]);
for (const o of others) await commandStartMs(o, -1); // creates the CA and warms the caches; not counted
for (let i = 0; i < launches; i++) for (const [k, o] of others.entries()) otherSamples[k]!.push(await commandStartMs(o, i));
rmSync(tmp, { recursive: true, force: true });
process.stdout.write(`start to listening, run to its command's first line (${launches} launches each, interleaved)\n`);
console.table(others.map((o, k) => ({ command: o.command, build: o.build, p50Ms: stat(otherSamples[k]!, 50), p90Ms: stat(otherSamples[k]!, 90) })));

