/**
 * The stdio shim (`mcp-wiretap stdio -- CMD`) against a direct pipe to the same server
 * (bench/stdio-echo-server.ts): added latency per message (one request in flight, request written →
 * its answer read), and a sustained rate with every message checked in the log.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./paths.ts";
import { round, summarize, type Summary } from "./stats.ts";
import { sleep, waitFor } from "./time.ts";

const MAIN = path.join(REPO, "dist", "cli", "main.js");
const ECHO = path.join(REPO, "bench", "stdio-echo-server.ts");

export interface StdioResult {
  latency: { messages: number; direct: Summary; shim: Summary; addedP50Ms: number | null; addedP99Ms: number | null };
  /** achievedRate: requests written per second over the sending window. */
  sustained: { targetRate: number; seconds: number; sent: number; answered: number; rpcRecords: number; missingRecords: number; achievedRate: number | null };
}

interface Peer {
  child: ChildProcessWithoutNullStreams;
  /** Resolves with the next answer line's arrival time for the given id. */
  onAnswer: (handler: (id: number) => void) => void;
  close(): Promise<void>;
}

function launch(shimLog: string | null): Peer {
  const args = shimLog ? [MAIN, "stdio", "--log-file", shimLog, "--", process.execPath, ECHO] : [ECHO];
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.resume();
  let handler: (id: number) => void = () => {};
  onAnswerIds(child.stdout, (id) => handler(id));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  return {
    child,
    onAnswer: (h) => (handler = h),
    close: async () => {
      child.stdin.end();
      await Promise.race([exited, sleep(10_000)]);
      child.kill("SIGKILL");
    },
  };
}

/** Calls `handler` with the numeric id of each line read from `stdout`. */
export function onAnswerIds(stdout: NodeJS.ReadableStream & { setEncoding(e: "utf8"): unknown }, handler: (id: number) => void): void {
  let pending = "";
  stdout.setEncoding("utf8");
  stdout.on("data", (chunk: string) => {
    pending += chunk;
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const m = /"id":(\d+)/.exec(line);
      if (m) handler(Number(m[1]));
    }
  });
}

const request = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"bench ${id}"}}}\n`;

/** Round trips one at a time: request written → answer read, in ms. */
async function pingPong(peer: Peer, count: number, firstId: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const id = firstId + i;
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      peer.onAnswer((got) => {
        if (got === id) resolve();
      });
      peer.child.stdin.write(request(id));
    });
    samples.push(performance.now() - t0);
  }
  return samples;
}

export async function runStdio(tmp: string, opts: { messages: number; rounds: number; rate: number; seconds: number }): Promise<StdioResult> {
  // Latency: direct and shim take turns (rounds), so that a drift of the machine falls on both.
  const direct = launch(null);
  const shim = launch(path.join(tmp, "stdio-latency.ndjson"));
  const d: number[] = [];
  const s: number[] = [];
  await pingPong(direct, 200, 1_000_000);
  await pingPong(shim, 200, 1_000_000);
  const per = Math.ceil(opts.messages / opts.rounds);
  for (let r = 0; r < opts.rounds; r++) {
    d.push(...(await pingPong(direct, per, r * per)));
    s.push(...(await pingPong(shim, per, r * per)));
  }
  await direct.close();
  await shim.close();
  const ds = summarize(d);
  const ss = summarize(s);

  // Sustained: `rate` requests per second for `seconds`, written every 10 ms; every request and answer must be in the log.
  const logFile = path.join(tmp, "stdio-sustained.ndjson");
  const peer = launch(logFile);
  let answered = 0;
  peer.onAnswer(() => answered++);
  const perTick = Math.round(opts.rate / 100);
  const ticks = opts.seconds * 100;
  const started = performance.now();
  let sent = 0;
  for (let t = 0; t < ticks; t++) {
    let batch = "";
    for (let i = 0; i < perTick; i++) batch += request(sent++);
    peer.child.stdin.write(batch);
    const next = started + (t + 1) * 10;
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
  }
  const elapsed = (performance.now() - started) / 1000;
  await waitFor(() => answered >= sent, 15_000, 20);
  await peer.close();
  let rpc = 0;
  for (const line of readFileSync(logFile, "utf8").split("\n")) if (line.includes('"event":"rpc"')) rpc++;
  const expected = sent * 2;
  return {
    latency: {
      messages: d.length,
      direct: ds,
      shim: ss,
      addedP50Ms: ds.p50 !== null && ss.p50 !== null ? round(ss.p50 - ds.p50) : null,
      addedP99Ms: ds.p99 !== null && ss.p99 !== null ? round(ss.p99 - ds.p99) : null,
    },
    sustained: { targetRate: opts.rate, seconds: opts.seconds, sent, answered, rpcRecords: rpc, missingRecords: Math.max(0, expected - rpc), achievedRate: round(sent / elapsed, 0) },
  };
}
