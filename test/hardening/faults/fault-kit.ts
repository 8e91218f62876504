/**
 * Misbehaving peers and process probes for the fault tests (test/hardening/faults).
 *
 * - `startFaultUpstream()`: an HTTPS (or plain) upstream whose handler the test writes, that counts the
 *   TCP connections it accepted and saw close: "did the proxy let go of the upstream?" is a question about
 *   its sockets, not about its requests.
 * - `startTlsStall()`: accepts TCP and reads, but never answers the ClientHello.
 * - `startBlackhole()`: a loopback port whose SYNs are dropped (a listener in a child process that never
 *   accepts, its accept queue filled): a TCP connect there stalls like one to an unroutable address.
 * - `startCliProxy()`: the built CLI as a child process, for /proc measurements (fds, RSS).
 */
import { spawn } from "node:child_process";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { NODE_BIN, readRecords } from "../../helpers/proxy-harness.js";
import { testPki } from "../../helpers/test-pki.js";

export interface FaultUpstream {
  port: number;
  url: string;
  /** TCP connections accepted so far. */
  readonly accepted: number;
  /** TCP connections currently open. */
  readonly open: number;
  /** TCP connections that have closed (either side). */
  readonly closed: number;
  server: http.Server;
  close(): Promise<void>;
}

export async function startFaultUpstream(
  handler: http.RequestListener,
  { secure = true, options = {} }: { secure?: boolean; options?: http.ServerOptions } = {},
): Promise<FaultUpstream> {
  const pki = testPki();
  const server = secure
    ? https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem, ...options }, handler)
    : http.createServer(options, handler);
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let closed = 0;
  server.on("connection", (socket: net.Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("close", () => {
      closed++;
      sockets.delete(socket);
    });
  });
  server.on("tlsClientError", () => undefined);
  server.on("clientError", (_err, socket: net.Socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `${secure ? "https" : "http"}://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return sockets.size;
    },
    get closed() {
      return closed;
    },
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Accepts TCP, swallows the ClientHello, never answers. */
export async function startTlsStall(): Promise<{ port: number; readonly accepted: number; readonly closed: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let closed = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.resume();
    socket.once("close", () => {
      closed++;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    get closed() {
      return closed;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// The child listens with a backlog of 1 and then blocks its own event loop: it never accepts. Once its
// accept queue is full, the kernel drops further SYNs and a connect() just waits.
const BLACKHOLE_CHILD = `
const s = require("node:net").createServer();
s.listen({ host: "127.0.0.1", port: 0, backlog: 1 }, () => {
  process.stdout.write(s.address().port + "\\n");
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);
  process.exit(0);
});`;

export async function startBlackhole(): Promise<{ port: number; close(): Promise<void> }> {
  const child = spawn(NODE_BIN, ["-e", BLACKHOLE_CHILD], { stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const fillers: net.Socket[] = [];
  const close = async (): Promise<void> => {
    for (const s of fillers) s.destroy();
    child.kill("SIGKILL");
    await exited;
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) resolve(Number(out.trim()));
      });
      child.once("exit", () => reject(new Error("blackhole child exited")));
    });
    // Fill the accept queue until a connect no longer completes.
    for (let i = 0; i < 16; i++) {
      const s = net.connect({ host: "127.0.0.1", port });
      s.on("error", () => undefined);
      fillers.push(s);
      const connected = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 300);
        s.once("connect", () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (!connected) return { port, close };
    }
    throw new Error("the blackhole's accept queue never filled up");
  } catch (err) {
    await close();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------
// The CLI as a child process, and what /proc says about it.

export { fdCount, rssBytes, startCliProxy, type CliProxy } from "../../helpers/cli-proxy.js";

export const MB = 1024 * 1024;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves when `socket` emits `close` (at once if it already has). */
export function closed(socket: net.Socket): Promise<void> {
  return socket.closed ? Promise.resolve() : new Promise((resolve) => socket.once("close", () => resolve()));
}

/** Polls a log file until a record matches; returns it. */
export async function waitForLogRecord(
  logFile: string,
  match: (r: Record<string, unknown>) => boolean,
  { timeoutMs = 10_000, what = "a log record" } = {},
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await readRecords(logFile)).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}
