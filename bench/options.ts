/** Command line: --quick, --only NAME (a path or a measure; repeatable), --base DIR, --help. */
import { existsSync } from "node:fs";
import path from "node:path";
import { BASE_PATH, PATH_NAMES, type PathName } from "./paths.ts";

export const MEASURES = ["throughput", "sse", "handshake", "memory", "logging", "stdio", "mcp", "replay", "hostile", "state", "startup"] as const;
export type Measure = (typeof MEASURES)[number];

export interface BenchOptions {
  quick: boolean;
  /** Keep the temp dir (logs, CA folders) for a look afterwards. */
  keepTemp: boolean;
  /** Write a V8 CPU profile of each Node proxy (mcp-wiretap, bare engine) into this folder. */
  cpuProfDir: string | null;
  /**
   * Another checkout of mcp-wiretap, built (`DIR/dist/cli/main.js`), run as the path `mcp-wiretap@base` in
   * the throughput rounds beside this build: a before/after measured side by side in one run.
   */
  baseDir: string | null;
  paths: PathName[];
  measures: Measure[];
  durations: {
    warmupMs: number;
    /** Measured window of the c=8 run (the headline), and of the c=1 and c=32 runs. */
    loadMs: number;
    loadMsOther: number;
    /** The load windows are split into this many rounds, every path taking its turn in each (throughput.ts). */
    loadRounds: number;
    sseAnswerLoadMs: number;
    sseEvents: number;
    sseIntervalMs: number;
    newHosts: number;
    bigMiB: number;
    bigTimeoutMs: number;
    /** The big response through the peers (mitmdump buffers it whole before answering). */
    bigTimeoutPeersMs: number;
    streams: number;
    /** Time allowed to open the streams through mcp-wiretap, and through the peers (bare engine, mitmdump). */
    streamsTimeoutMs: number;
    streamsTimeoutPeersMs: number;
    logRate: number;
    logSeconds: number;
    /** stdio shim: round trips measured (split in rounds, shim and direct pipe taking turns), and the sustained run. */
    stdioMessages: number;
    stdioRounds: number;
    /** Replays (and direct SDK calls) timed, taking turns. */
    replayRounds: number;
    stdioRate: number;
    stdioSeconds: number;
    /** Issue 33's attacks: longest each may run, and its sizes (1: the issue's). */
    hostileSeconds: number;
    hostileScale: number;
    /** Issue 31's shared-state section: each measured window, per Redis placement. */
    stateWindowMs: number;
  };
  /** Issue 33's rows to run (--rows 1,2,3); null: all. */
  hostileRows: number[] | null;
}

const USAGE = `usage: node bench/run.ts [--quick] [--only NAME]... [--keep-temp] [--cpu-prof DIR]
  --quick      short durations (smoke run); figures are not comparable with a full run
  --keep-temp  keep the temp dir (proxy logs, CA folders) and print its path
  --cpu-prof DIR
               write a CPU profile of each Node proxy into DIR (.cpuprofile: Chrome DevTools or
               speedscope show it as a flame graph); profiling slows the proxies down
  --base DIR   also run the build in DIR (another checkout, \`npm run build\` done there) as the path
               mcp-wiretap@base, in the throughput rounds beside this build (before/after in one run)
  startup      (a measure) runs bench/stdio-startup.ts (issue 25: stdio start-up beside the bare server,
               20 launches each, 5 with --quick; with --base, the other build too) after the others
  --rows LIST  the hostile measure: only these rows of issue 33's table (e.g. 1,2,3)
  --only NAME  run only this path (${PATH_NAMES.join(", ")}) or measure (${MEASURES.join(", ")});
               repeatable; "direct" always runs when a measure needs it as the reference
`;

export function parseOptions(argv: readonly string[]): BenchOptions {
  let quick = false;
  let keepTemp = false;
  let cpuProfDir: string | null = null;
  let baseDir: string | null = null;
  let hostileRows: number[] | null = null;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--quick") quick = true;
    else if (arg === "--keep-temp") keepTemp = true;
    else if (arg === "--cpu-prof" && argv[i + 1]) cpuProfDir = path.resolve(argv[++i]!);
    else if (arg === "--base" && argv[i + 1]) baseDir = path.resolve(argv[++i]!);
    else if (arg === "--rows" && argv[i + 1]) hostileRows = (argv[++i] ?? "").split(",").map(Number).filter((n) => n >= 1 && n <= 8);
    else if (arg === "--only" && argv[i + 1]) only.push(...(argv[++i] ?? "").split(","));
    else if (arg?.startsWith("--only=")) only.push(...arg.slice(7).split(","));
    else if (arg === "--help" || arg === "-h") {
      process.stdout.write(USAGE);
      process.exit(0);
    } else {
      process.stderr.write(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
      process.exit(2);
    }
  }
  for (const name of only) {
    if (!(PATH_NAMES as readonly string[]).includes(name) && !(MEASURES as readonly string[]).includes(name)) {
      process.stderr.write(`--only ${name}: not a path or a measure\n${USAGE}`);
      process.exit(2);
    }
  }
  const onlyPaths = PATH_NAMES.filter((p) => only.includes(p));
  const onlyMeasures = MEASURES.filter((m) => only.includes(m));
  const loggingOnly = onlyMeasures.length === 1 && onlyMeasures[0] === "logging";
  // The stdio, mcp, hostile-peer and shared-state measures need no HTTP path of the comparison (they start their own).
  const stdioOnly = onlyMeasures.length > 0 && onlyMeasures.every((m) => m === "stdio" || m === "mcp" || m === "replay" || m === "hostile" || m === "state" || m === "startup");
  const paths: PathName[] = onlyPaths.length ? [...onlyPaths] : loggingOnly ? ["mcp-wiretap"] : stdioOnly ? [] : PATH_NAMES.filter((p) => p !== BASE_PATH);
  if (baseDir !== null) {
    if (!existsSync(path.join(baseDir, "dist", "cli", "main.js"))) {
      process.stderr.write(`--base ${baseDir}: no dist/cli/main.js there; run \`npm install && npm run build\` in that checkout first\n`);
      process.exit(2);
    }
    if (!paths.includes(BASE_PATH)) paths.push(BASE_PATH);
  } else if (paths.includes(BASE_PATH)) {
    process.stderr.write(`--only ${BASE_PATH} needs --base DIR (the checkout to compare with)\n${USAGE}`);
    process.exit(2);
  }
  const measures: Measure[] = onlyMeasures.length ? [...onlyMeasures] : [...MEASURES];
  // Added latency is relative to direct: keep it as the reference.
  if (!paths.includes("direct") && measures.some((m) => m === "throughput" || m === "sse" || m === "handshake")) paths.unshift("direct");
  return {
    quick,
    keepTemp,
    cpuProfDir,
    baseDir,
    paths,
    measures,
    hostileRows,
    durations: quick
      ? {
          warmupMs: 200, loadMs: 1000, loadMsOther: 700, loadRounds: 2, sseAnswerLoadMs: 700, sseEvents: 50, sseIntervalMs: 10, newHosts: 6,
          bigMiB: 20, bigTimeoutMs: 15_000, bigTimeoutPeersMs: 10_000, streams: 200, streamsTimeoutMs: 15_000, streamsTimeoutPeersMs: 5_000, logRate: 5000, logSeconds: 2,
          stdioMessages: 1000, stdioRounds: 2, replayRounds: 10, stdioRate: 10_000, stdioSeconds: 1, hostileSeconds: 8, hostileScale: 0.2, stateWindowMs: 1000,
        }
      : {
          warmupMs: 150, loadMs: 4000, loadMsOther: 2000, loadRounds: 4, sseAnswerLoadMs: 1500, sseEvents: 200, sseIntervalMs: 10, newHosts: 20,
          bigMiB: 100, bigTimeoutMs: 30_000, bigTimeoutPeersMs: 20_000, streams: 1000, streamsTimeoutMs: 40_000, streamsTimeoutPeersMs: 15_000, logRate: 5000, logSeconds: 10,
          stdioMessages: 4000, stdioRounds: 4, replayRounds: 30, stdioRate: 10_000, stdioSeconds: 3, hostileSeconds: 20, hostileScale: 1, stateWindowMs: 3000,
        },
  };
}
