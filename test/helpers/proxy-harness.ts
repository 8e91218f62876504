/**
 * End-to-end harness for the proxy.
 *
 * - `startTestProxy()` runs the proxy IN-PROCESS through `startProxy` (the same wiring as `mcp-wiretap start`)
 *   on 127.0.0.1, port 0, with a fresh CA folder, a temp NDJSON log file, and the test PKI's CA trusted
 *   upstream. `records()` / `waitForRecord()` read the log back.
 * - `openTunnel()` / `tlsThroughTunnel()` / `readRawResponse()`: a hand-driven CONNECT client, for the
 *   checks undici hides (framing, peer certificates, hostile targets, Host headers).
 * - `runCli()` / `spawnCli()`: the BUILT CLI (`dist/cli/main.js`) as a child process on the project's Node.
 *   `npm test` builds first (`pretest`); when running vitest directly, run `npm run build` before.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { fileURLToPath } from "node:url";
import { startProxy, type StartOptions } from "../../src/cli/start.js";
import { testPki, writeTempFile } from "./test-pki.js";
import { waitUntil } from "./wait-until.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CLI_MAIN = path.join(REPO_ROOT, "dist", "cli", "main.js");
/** The project's own Node (24); the system one may be older. */
export const NODE_BIN = existsSync(path.join(REPO_ROOT, "node_modules", ".bin", "node"))
  ? path.join(REPO_ROOT, "node_modules", ".bin", "node")
  : process.execPath;

export type LogRecord = Record<string, unknown> & { event?: string; level?: string };

export interface TestProxy {
  /** `http://127.0.0.1:PORT` */
  url: string;
  host: string;
  port: number;
  /** Ports of `--reverse :0=URL` listeners, in order. */
  reversePorts: number[];
  /** PEM of the proxy's CA: what a client must trust. */
  caPem: string;
  caCertPath: string;
  caDir: string;
  logFile: string;
  /** What `startProxy` printed on stderr (the banner). */
  banner: string;
  /** Every complete NDJSON line of the log file so far, parsed. */
  records(): Promise<LogRecord[]>;
  /** Polls the log until a record matches; returns it. */
  waitForRecord(match: (r: LogRecord) => boolean, opts?: { timeoutMs?: number; what?: string }): Promise<LogRecord>;
  /** Polls the log until `count` records match; returns them. */
  waitForRecords(
    match: (r: LogRecord) => boolean,
    count: number,
    opts?: { timeoutMs?: number; what?: string },
  ): Promise<LogRecord[]>;
  /** Stops the proxy (as on SIGTERM), removes its temp files, and returns the final log records. */
  stop(reason?: string): Promise<LogRecord[]>;
}

/** The test PKI's CA as a file, for `upstreamCa`. */
export function testCaFile(): string {
  return writeTempFile(testPki().caPem, "test-upstream-ca.pem");
}

export async function readRecords(logFile: string): Promise<LogRecord[]> {
  let text: string;
  try {
    text = await readFile(logFile, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const complete = text.endsWith("\n") ? text : text.slice(0, text.lastIndexOf("\n") + 1);
  return complete
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as LogRecord);
}

/** Starts the proxy in this process; `overrides` replace any of the defaults. */
export async function startTestProxy(overrides: Partial<StartOptions> = {}): Promise<TestProxy> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-proxy-test-"));
  const caDir = overrides.caDir ?? path.join(dir, "ca");
  const logFile = overrides.logFile ?? path.join(dir, "log.ndjson");
  const options: StartOptions = {
    host: "127.0.0.1",
    port: 0,
    upstreamCa: [testCaFile()],
    insecureUpstream: false,
    passthrough: [],
    graceMs: 500,
    ...overrides,
    caDir,
    logFile,
  };
  // startProxy prints its banner on stderr: keep it, rather than spamming the test output.
  let banner = "";
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    banner += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
    return true;
  }) as typeof process.stderr.write;
  let running: Awaited<ReturnType<typeof startProxy>>;
  try {
    running = await startProxy(options);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  } finally {
    process.stderr.write = write;
  }
  const caPem = await readFile(running.caCertPath, "utf8");
  const host = running.address.host;
  const records = () => readRecords(logFile);
  const waitForRecords = async (
    match: (r: LogRecord) => boolean,
    count: number,
    { timeoutMs = 5_000, what = "log records" } = {},
  ): Promise<LogRecord[]> => {
    let found: LogRecord[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      found = (await records()).filter(match);
      if (found.length >= count) return found;
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${count} × ${what}; log:\n${JSON.stringify(await records(), null, 1)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  let stopping: Promise<LogRecord[]> | undefined;
  return {
    url: `http://${host}:${running.address.port}`,
    host,
    port: running.address.port,
    reversePorts: running.address.reversePorts,
    caPem,
    caCertPath: running.caCertPath,
    caDir,
    logFile,
    banner,
    records,
    waitForRecords,
    async waitForRecord(match, opts) {
      const [first] = await waitForRecords(match, 1, opts);
      return first!;
    },
    stop(reason = "test") {
      stopping ??= (async () => {
        try {
          await running.stop(reason);
          return await records();
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      })();
      return stopping;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// A hand-driven CONNECT client.

export interface RawResponse {
  status: number;
  /** The head as received, e.g. "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n…" (without the blank line). */
  head: string;
  /** Lower-cased header names → values (last wins). */
  headers: Record<string, string>;
  /** The bytes after the head (not de-chunked). */
  body: Buffer;
}

export function parseRawResponse(bytes: Buffer): RawResponse {
  const end = bytes.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`no complete response head in ${JSON.stringify(bytes.toString("latin1").slice(0, 200))}`);
  const head = bytes.subarray(0, end).toString("latin1");
  const [statusLine = "", ...lines] = head.split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, head, headers, body: bytes.subarray(end + 4) };
}

/** Reads a socket until the peer closes it (or `timeoutMs`), and returns everything received. */
export function readAll(socket: net.Socket | tls.TLSSocket, timeoutMs = 5_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`socket still open after ${timeoutMs} ms; got ${Buffer.concat(chunks).length} bytes`));
    }, timeoutMs);
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    socket.resume();
  });
}

/** Sends `data` on a fresh connection to the proxy and returns everything it answers until it closes. */
export async function rawProxyExchange(proxy: { host: string; port: number }, data: string | Buffer, timeoutMs = 5_000): Promise<Buffer> {
  const socket = net.connect({ host: proxy.host, port: proxy.port });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const done = readAll(socket, timeoutMs);
  socket.write(data);
  return done;
}

/**
 * Sends `CONNECT authority` and waits for the proxy's answer head. On 200 the socket is the tunnel;
 * otherwise the rest of the answer is read and returned.
 */
export async function openTunnel(
  proxy: { host: string; port: number },
  authority: string,
): Promise<{ status: number; socket: net.Socket; response: RawResponse }> {
  const socket = net.connect({ host: proxy.host, port: proxy.port });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  let buffered = Buffer.alloc(0);
  const headEnd = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to CONNECT ${authority}`)), 5_000);
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end >= 0) {
        clearTimeout(timer);
        socket.off("data", onData);
        socket.off("close", onClose);
        socket.pause();
        resolve(end);
      }
    };
    const onClose = (): void => {
      clearTimeout(timer);
      reject(new Error(`proxy closed the connection before answering CONNECT ${authority}`));
    };
    socket.on("data", onData);
    socket.once("close", onClose);
  });
  const rest = buffered.subarray(headEnd + 4);
  const head = parseRawResponse(buffered.subarray(0, headEnd + 4));
  if (head.status === 200) {
    if (rest.length > 0) socket.unshift(rest);
    return { status: 200, socket, response: head };
  }
  const more = await readAll(socket);
  return { status: head.status, socket, response: parseRawResponse(Buffer.concat([buffered, more])) };
}

/** TLS over an open tunnel; `host` is what the certificate is checked against (and the SNI if a name). */
export async function tlsThroughTunnel(tunnel: net.Socket, host: string, ca: string | string[]): Promise<tls.TLSSocket> {
  const secure = tls.connect({
    socket: tunnel,
    host,
    servername: net.isIP(host) ? undefined : host,
    ca,
    ALPNProtocols: ["http/1.1"],
  });
  await new Promise<void>((resolve, reject) => {
    secure.once("secureConnect", resolve);
    secure.once("error", reject);
  });
  secure.on("error", () => undefined);
  return secure;
}

/** One request with `Connection: close` over `socket`; resolves with the raw answer. */
export async function rawRequest(socket: net.Socket | tls.TLSSocket, request: string): Promise<RawResponse> {
  const done = readAll(socket);
  socket.write(request);
  return parseRawResponse(await done);
}

/** A port on 127.0.0.1 that nothing listens on (was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------------------------------------------------
// curl, as a user would check things (it shows the real response framing).

export const CURL = "/usr/bin/curl";
export const hasCurl = existsSync(CURL);

/** The environment without proxy variables, so only `-x` decides. */
export function curlEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ["NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) {
    delete env[name];
  }
  return env;
}

/** Runs curl (`--noproxy ""` is added); never rejects. */
export function curl(args: string[], timeoutMs = 10_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(CURL, ["--noproxy", "", ...args], { env: curlEnv(), timeout: timeoutMs }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** Splits `curl -D -` output into its heads; the last is the origin server's (a CONNECT answer comes first). */
export function lastCurlHead(stdout: string): { status: number; headers: Map<string, string>; raw: string } {
  const heads = stdout.split(/\r\n\r\n/).filter((h) => h.startsWith("HTTP/"));
  const raw = heads.at(-1) ?? "";
  const [statusLine = "", ...lines] = raw.split("\r\n");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const i = line.indexOf(":");
    if (i > 0) headers.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
  }
  return { status: Number(statusLine.split(" ")[1]), headers, raw };
}

// ---------------------------------------------------------------------------------------------------------
// The built CLI as a child process.

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "NODE_USE_ENV_PROXY", "NODE_OPTIONS"]) {
    delete env[name];
  }
  return env;
}

export function assertBuilt(): void {
  if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: run \`npm run build\` first (npm test does)`);
}

/** Runs `node dist/cli/main.js ...args` to completion; `as` runs it as that user (see ordinary-user.ts). */
export function runCli(args: string[], { timeoutMs = 15_000, env, as }: { timeoutMs?: number; env?: NodeJS.ProcessEnv; as?: { prefix: string[] } } = {}): Promise<CliResult> {
  assertBuilt();
  const [command, ...argv] = [...(as?.prefix ?? []), NODE_BIN, CLI_MAIN, ...args];
  return new Promise((resolve) => {
    const child = execFile(command!, argv, { cwd: REPO_ROOT, env: cliEnv(env), timeout: timeoutMs }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string }) | null;
      resolve({
        code: child.exitCode ?? (typeof e?.code === "number" ? e.code : null),
        signal: child.signalCode,
        stdout: String(stdout),
        stderr: String(stderr),
      });
    });
  });
}

export interface SpawnedCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stderr matches. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (for cleanup). */
  kill(): void;
}

/** Starts `node dist/cli/main.js ...args` and leaves it running. */
export function spawnCli(args: string[], { env }: { env?: NodeJS.ProcessEnv } = {}): SpawnedCli {
  assertBuilt();
  const child = spawn(NODE_BIN, [CLI_MAIN, ...args], { cwd: REPO_ROOT, env: cliEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("close", (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => (done = true));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitForStderr(pattern, timeoutMs = 10_000) {
      await waitUntil(() => pattern.test(err) || done, { timeoutMs, what: `stderr to match ${pattern}` });
      const match = pattern.exec(err);
      if (!match) throw new Error(`process exited before stderr matched ${pattern}; stderr:\n${err}`);
      return match;
    },
    exited,
    kill() {
      if (!done) child.kill("SIGKILL");
    },
  };
}
