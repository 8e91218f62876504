/**
 * The paths a request can take from the bench's client to its upstream: straight, or through one of the
 * proxies compared, each proxy in its own process (so its RSS and CPU are its own).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Child } from "./child.ts";
import { waitFor } from "./time.ts";
import { interceptNothing, otlpReceiver, redisState, type Extra } from "./variants.ts";

export const PATH_NAMES = ["direct", "mcp-wiretap", "bare-engine", "mitmdump", "mcp-wiretap+otlp", "mcp-wiretap+state", "mcp-wiretap+intercept", "mcp-wiretap@base"] as const;
/** The build of another checkout (`--base DIR`), for a before/after in one run. */
export const BASE_PATH = "mcp-wiretap@base";
/**
 * mcp-wiretap with a deployment feature on (see variants.ts), or another build of it: measured for
 * throughput and CPU only.
 */
export const VARIANT_PATHS: ReadonlySet<PathName> = new Set(["mcp-wiretap+otlp", "mcp-wiretap+state", "mcp-wiretap+intercept", BASE_PATH]);
export type PathName = (typeof PATH_NAMES)[number];

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WIRETAP_MAIN = path.join(REPO, "dist", "cli", "main.js");
const BARE_ENGINE = path.join(REPO, "bench", "bare-engine.ts");
/** The V8 setting `npm start` and the Docker image run mcp-wiretap with; the bare engine gets it too. */
export const NODE_FLAGS = ["--max-semi-space-size=8"];

export interface BenchContext {
  tmp: string;
  benchCaFile: string;
  benchCaPem: string;
  /** Folder for V8 CPU profiles of the Node proxies (`--cpu-prof`), or null. */
  cpuProfDir?: string | null;
  /** `--base DIR`: the checkout whose build runs as `mcp-wiretap@base`. */
  baseDir?: string | null;
}

/** Node options of a proxy child: the V8 setting, and a CPU profile when asked for. */
export function nodeFlags(ctx: Pick<BenchContext, "cpuProfDir">): string[] {
  return ctx.cpuProfDir ? [...NODE_FLAGS, "--cpu-prof", `--cpu-prof-dir=${ctx.cpuProfDir}`] : NODE_FLAGS;
}

export interface RunningPath {
  name: PathName;
  /** The proxy's listening address; null for `direct`. */
  proxy: { host: string; port: number } | null;
  /** Roots the client trusts: the bench CA (direct) or the proxy's CA. */
  clientCaPem: string;
  child: Child | null;
  logFile: string | null;
  /** Process started → accepting connections. */
  startupMs: number | null;
  stop(): Promise<string | null>;
}

export class PathUnavailable extends Error {}

let instance = 0;

export async function startPath(name: PathName, ctx: BenchContext): Promise<RunningPath> {
  switch (name) {
    case "direct":
      return { name, proxy: null, clientCaPem: ctx.benchCaPem, child: null, logFile: null, startupMs: null, stop: async () => null };
    case "mcp-wiretap":
      return startWiretap(ctx);
    case "bare-engine":
      return startBareEngine(ctx);
    case "mitmdump":
      return startMitmdump(ctx);
    case "mcp-wiretap+otlp":
      return startWiretap(ctx, name, await otlpReceiver());
    case "mcp-wiretap+state":
      return startWiretap(ctx, name, await redisState(ctx.tmp));
    case "mcp-wiretap+intercept":
      return startWiretap(ctx, name, interceptNothing());
    case "mcp-wiretap@base":
      if (!ctx.baseDir) throw new PathUnavailable("no --base DIR given");
      return startWiretap(ctx, name, null, path.join(ctx.baseDir, "dist", "cli", "main.js"));
  }
}

/** `node dist/cli/main.js start --port 0 …`, logging to a file in the temp dir. */
export async function startWiretap(ctx: BenchContext, name: PathName = "mcp-wiretap", extra: Extra | null = null, main = WIRETAP_MAIN): Promise<RunningPath> {
  if (!existsSync(main)) throw new PathUnavailable(`${main} is missing: run \`npm run build\` first`);
  const n = ++instance;
  const caDir = path.join(ctx.tmp, `wiretap-ca-${n}`);
  const logFile = path.join(ctx.tmp, `wiretap-${n}.log`);
  const started = performance.now();
  const child = new Child("mcp-wiretap", process.execPath, [
    ...nodeFlags(ctx),
    main, "start", "--host", "127.0.0.1", "--port", "0", "--ca-dir", caDir, "--log-file", logFile, "--upstream-ca", ctx.benchCaFile, ...(extra?.args ?? []),
  ]);
  const listening = await child.waitForOutput(/listening on http:\/\/127\.0\.0\.1:(\d+)/, 30_000);
  const caLine = child.stderr.match(/CA certificate: (.+?)(?: \(created now\))?$/m);
  if (!listening || !caLine?.[1]) {
    await child.stop();
    await extra?.stop();
    throw new Error(`mcp-wiretap did not start: exit ${JSON.stringify(child.exit)}; stderr: ${child.stderr.trim() || "(empty)"}`);
  }
  const startupMs = performance.now() - started;
  return {
    name,
    proxy: { host: "127.0.0.1", port: Number(listening[1]) },
    clientCaPem: readFileSync(caLine[1], "utf8"),
    child,
    logFile,
    startupMs,
    stop: async () => {
      const result = await stopChild(child);
      await extra?.stop();
      return result;
    },
  };
}

async function startBareEngine(ctx: BenchContext): Promise<RunningPath> {
  const caDir = path.join(ctx.tmp, "bare-engine-ca");
  const started = performance.now();
  const child = new Child("bare-engine", process.execPath, [...nodeFlags(ctx), BARE_ENGINE, caDir], { ...process.env, NODE_EXTRA_CA_CERTS: ctx.benchCaFile });
  const listening = await child.waitForOutput(/BARE_ENGINE_LISTENING (\d+)/, 60_000);
  if (!listening) {
    await child.stop();
    throw new Error(`bare http-mitm-proxy did not start: exit ${JSON.stringify(child.exit)}; stderr: ${child.stderr.trim() || "(empty)"}`);
  }
  return {
    name: "bare-engine",
    proxy: { host: "127.0.0.1", port: Number(listening[1]) },
    clientCaPem: readFileSync(path.join(caDir, "certs", "ca.pem"), "utf8"),
    child,
    logFile: null,
    startupMs: performance.now() - started,
    stop: () => stopChild(child),
  };
}

export function findOnPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const candidate = path.join(dir, command);
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

async function startMitmdump(ctx: BenchContext): Promise<RunningPath> {
  const mitmdump = findOnPath("mitmdump");
  if (!mitmdump) throw new PathUnavailable("mitmdump is not on PATH (Debian: apt-get install mitmproxy); skipped");
  const confdir = path.join(ctx.tmp, "mitmproxy");
  mkdirSync(confdir, { recursive: true, mode: 0o700 });
  const port = await freePort();
  const started = performance.now();
  const child = new Child("mitmdump", mitmdump, [
    "--listen-host", "127.0.0.1", "--listen-port", String(port), "--set", `confdir=${confdir}`, "--ssl-insecure", "-q",
  ]);
  const caFile = path.join(confdir, "mitmproxy-ca-cert.pem");
  const up = await waitFor(async () => !child.alive || (existsSync(caFile) && (await canConnect(port))), 30_000, 50);
  if (!up || !child.alive) {
    await child.stop();
    throw new Error(`mitmdump did not start: exit ${JSON.stringify(child.exit)}; stderr: ${child.stderr.trim() || "(empty)"}`);
  }
  return {
    name: "mitmdump",
    proxy: { host: "127.0.0.1", port },
    clientCaPem: readFileSync(caFile, "utf8"),
    child,
    logFile: null,
    startupMs: performance.now() - started,
    stop: () => stopChild(child),
  };
}

/** Stops a proxy; returns a sentence when it had already died or did not stop cleanly. */
async function stopChild(child: Child): Promise<string | null> {
  const diedBefore = child.alive ? null : `${child.name} exited on its own before the bench stopped it: ${JSON.stringify(child.exit)}`;
  const result = await child.stop();
  if (diedBefore) return diedBefore;
  if (result.killed) return `${child.name} did not exit within 5 s of SIGTERM and was killed`;
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}
