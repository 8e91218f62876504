/**
 * Helpers for the hostile-input tests (not a test file): a client that hashes what it reads instead of
 * keeping it, a raw TLS/TCP upstream that records the exact bytes it receives, the CLI proxy as a child
 * process with its memory read from /proc, and the "still serves" check every case ends with.
 */
import { createHash } from "node:crypto";
import net from "node:net";
import tls from "node:tls";
import { ProxyAgent, request } from "undici";
import { expect } from "vitest";
import type { LogRecord } from "../../helpers/proxy-harness.js";
import { testPki } from "../../helpers/test-pki.js";

export const MiB = 1024 * 1024;

export function sha256(data: Buffer | string): string {
  return createHash("sha256").update(data).digest("hex");
}

export interface FetchedRaw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as received (content-encoding NOT undone), kept only when `keep` is set. */
  body: Buffer;
  length: number;
  sha256: string;
}

/**
 * One request through the proxy with undici's `request` (which never undoes content-encoding); the body is
 * hashed chunk by chunk and only kept when `keep` (so 200 MB never sit in the test's memory).
 */
export async function fetchRaw(
  agent: ProxyAgent,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer | string | AsyncIterable<Buffer>; keep?: boolean } = {},
): Promise<FetchedRaw> {
  const res = await request(url, {
    dispatcher: agent,
    method: (init.method ?? "GET") as "GET",
    headers: init.headers ?? {},
    ...(init.body !== undefined ? { body: init.body as Buffer } : {}),
  });
  const hash = createHash("sha256");
  const kept: Buffer[] = [];
  let length = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    hash.update(chunk);
    length += chunk.length;
    if (init.keep) kept.push(chunk);
  }
  return { status: res.statusCode, headers: res.headers, body: Buffer.concat(kept), length, sha256: hash.digest("hex") };
}

export function proxyAgent(proxy: { url: string; caPem: string }): ProxyAgent {
  return new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem }, bodyTimeout: 60_000, headersTimeout: 30_000 });
}

/** MCP headers that make an exchange an MCP one from its first byte (so body problems become `invalid` records). */
export function mcpHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------------------

export interface RawUpstream {
  port: number;
  /** `127.0.0.1:PORT` */
  authority: string;
  /** Everything each connection sent, in order of arrival (one Buffer per connection, growing). */
  received: Buffer[];
  /** Bytes received over all connections, as latin1 text. */
  all(): string;
  close(): Promise<void>;
}

/**
 * A TLS (test PKI) or plain TCP server that records the raw bytes it gets and answers each request head with
 * `answer` (default: a small 200). It parses nothing: what it records is exactly what the proxy forwarded.
 */
export async function startRawUpstream(opts: { tls: boolean; answer?: (head: string) => string | Buffer }): Promise<RawUpstream> {
  const pki = testPki();
  const received: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const answer = opts.answer ?? (() => "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok");
  const onSocket = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    const index = received.push(Buffer.alloc(0)) - 1;
    let answered = 0;
    socket.on("data", (chunk: Buffer) => {
      received[index] = Buffer.concat([received[index]!, chunk]);
      // One answer per complete request head (bodies in these tests are small and counted as part of the text).
      const heads = received[index]!.toString("latin1").split("\r\n\r\n").length - 1;
      while (answered < heads) {
        const head = received[index]!.toString("latin1").split("\r\n\r\n")[answered]!;
        answered++;
        socket.write(answer(head));
      }
    });
  };
  const server = opts.tls
    ? tls.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem, ALPNProtocols: ["http/1.1"] }, onSocket)
    : net.createServer(onSocket);
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    authority: `127.0.0.1:${port}`,
    received,
    all: () => Buffer.concat(received).toString("latin1"),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------

export { startCliProxy, type CliProxy } from "../../helpers/cli-proxy.js";
export { rssBytes as rssOf } from "../../helpers/cli-proxy.js";
import { rssBytes as rssOf } from "../../helpers/cli-proxy.js";

/** Samples a process's RSS every `everyMs` until stopped; returns the highest value seen. */
export function sampleRss(pid: number, everyMs = 20): { stop(): number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssOf(pid));
    } catch {
      // the process is gone: keep the last peak
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      try {
        peak = Math.max(peak, rssOf(pid));
      } catch {
        // gone
      }
      return peak;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------

/** Waits for the `http` record of the exchange on exactly this path and returns it. */
export async function httpRecord(
  proxy: { waitForRecord(match: (r: LogRecord) => boolean, opts?: { timeoutMs?: number; what?: string }): Promise<LogRecord> },
  path: string,
): Promise<LogRecord> {
  return proxy.waitForRecord((r) => r.event === "http" && r.path === path, { what: `http record for ${path}` });
}

/** rpc records of exchanges on exactly this path. */
export function rpcRecordsOn(records: LogRecord[], path: string): LogRecord[] {
  return records.filter((r) => r.event === "rpc" && r.path === path);
}

/** Every record in the log is a JSON object with an event name (the log is never corrupted by hostile input). */
export function expectWellFormedLog(records: LogRecord[]): void {
  for (const r of records) {
    expect(typeof r).toBe("object");
    expect(typeof r.event).toBe("string");
  }
}
