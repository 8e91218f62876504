/**
 * Faults on the proxy→server leg and half-finished clients, end to end through the real proxy:
 * for each, what the client sees, what the record says, that the proxy serves the next request, and that
 * the upstream's sockets are let go of.
 *
 * Covered elsewhere (not repeated): bad upstream certificates and refused connections in
 * test/proxy/tls.test.ts; upstream resets mid-response, client disconnects mid-SSE and stop() with open
 * streams in test/proxy/aborts.test.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { Writable } from "node:stream";
import pino from "pino";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateCa, LeafIssuer } from "../../../src/ca/index.js";
import { httpRecordAddon } from "../../../src/records/http-record.js";
import { recordProxyEvents } from "../../../src/records/proxy-records.js";
import { ProxyServer } from "../../../src/proxy/server.js";
import { startHttpsUpstream, type TestUpstream } from "../../helpers/https-upstream.js";
import { openTunnel, startTestProxy, tlsThroughTunnel, type LogRecord, type TestProxy } from "../../helpers/proxy-harness.js";
import { testPki } from "../../helpers/test-pki.js";
import { waitUntil } from "../../helpers/wait-until.js";
import { sleep, startBlackhole, startCliProxy, startFaultUpstream, startTlsStall, type FaultUpstream } from "./fault-kit.js";

type Failure = { code: string; message: string };

describe("upstream faults through the proxy", () => {
  let proxy: TestProxy;
  let normal: TestUpstream;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    [proxy, normal] = await Promise.all([startTestProxy(), startHttpsUpstream()]);
  });

  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    await normal?.close();
    await proxy?.stop();
  });

  function agent(): ProxyAgent {
    const a = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
    cleanups.push(() => a.destroy());
    return a;
  }

  async function upstream(handler: http.RequestListener, options: http.ServerOptions = {}): Promise<FaultUpstream> {
    const u = await startFaultUpstream(handler, { options });
    cleanups.push(() => u.close());
    return u;
  }

  /** The proxy lives on: a normal request through it works. */
  async function stillServes(): Promise<void> {
    const a = agent();
    const res = await fetch(`${normal.url}/bytes?n=321`, { dispatcher: a });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(321);
    await a.destroy();
  }

  const httpRecord = (port: number, pathPrefix?: string) => (r: LogRecord) =>
    r.event === "http" && r.server === `127.0.0.1:${port}` && (pathPrefix === undefined || String(r.path).startsWith(pathPrefix));

  it("an upstream that never sends headers: the client waits, others are served, giving up closes the upstream socket", async () => {
    let seen = 0;
    const stall = await upstream((req) => {
      seen++;
      req.resume(); // and never answer
    });
    const controller = new AbortController();
    const pending = fetch(`${stall.url}/never`, { dispatcher: agent(), signal: controller.signal });
    pending.catch(() => undefined);
    await waitUntil(() => seen === 1, { what: "the request to reach the stalled upstream" });
    // Meanwhile the proxy serves others.
    await stillServes();
    // No proxy-made timeout: the client waits, as it would talking to the server directly.
    expect(await Promise.race([pending.then(() => "answered", () => "failed"), sleep(300).then(() => "waiting")])).toBe("waiting");
    controller.abort();
    await expect(pending).rejects.toThrow();
    await waitUntil(() => stall.closed === stall.accepted && stall.open === 0, { what: "the upstream to see its connection close" });
    const record = await proxy.waitForRecord(httpRecord(stall.port, "/never"));
    expect(record).toMatchObject({ status: null, level: "info", error: { code: "client_aborted" } });
    expect(Number(record.durationMs)).toBeGreaterThanOrEqual(300);
    await stillServes();
  });

  it("an upstream that stalls mid-body: the client has the head and the first bytes; giving up closes the upstream socket", async () => {
    const stall = await upstream((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": "100000" });
      res.write(Buffer.alloc(1000, 0x62)); // and never the rest
    });
    const controller = new AbortController();
    const res = await fetch(`${stall.url}/half`, { dispatcher: agent(), signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let got = 0;
    while (got < 1000) got += (await reader.read()).value?.byteLength ?? 0;
    expect(got).toBe(1000);
    const next = reader.read();
    next.catch(() => undefined);
    const early = await Promise.race([next.then(() => "data"), sleep(300).then(() => "waiting")]);
    expect(early).toBe("waiting");
    controller.abort();
    await expect(next).rejects.toThrow();
    await waitUntil(() => stall.open === 0 && stall.closed === stall.accepted, { what: "the upstream to see its connection close" });
    const record = await proxy.waitForRecord(httpRecord(stall.port, "/half"));
    expect(record).toMatchObject({ status: 200, responseBytes: 1000, error: { code: "client_aborted" } });
    await stillServes();
  });

  it("a name that does not resolve: 502 with one line, recorded as upstream_dns (CONNECT and absolute-URI)", async () => {
    const a = agent();
    const res = await fetch("https://nonexistent.invalid/mcp", { dispatcher: a, method: "POST", body: "{}" });
    expect(res.status).toBe(502);
    expect(await res.text()).toBe("mcp-wiretap: nonexistent.invalid:443: name does not resolve\n");
    const record = await proxy.waitForRecord((r) => r.event === "http" && r.server === "nonexistent.invalid:443");
    expect(record).toMatchObject({ level: "warn", mode: "mitm", status: 502, statusSource: "proxy", error: { code: "upstream_dns" } });

    const plain = await fetch("http://nonexistent.invalid:8080/x", { dispatcher: a });
    expect(plain.status).toBe(502);
    expect(await plain.text()).toContain("name does not resolve");
    await proxy.waitForRecord((r) => r.event === "http" && r.server === "nonexistent.invalid:8080" && r.mode === "plain-proxy" && (r.error as Failure)?.code === "upstream_dns");
    await stillServes();
  });

  it("a client that cuts its upload off: the upstream request is aborted, and the record says so", async () => {
    let received = 0;
    let upstreamSaw: "complete" | "aborted" | null = null;
    const sink = await upstream((req, res) => {
      req.on("data", (c: Buffer) => (received += c.length));
      req.on("error", () => undefined);
      req.once("end", () => {
        upstreamSaw = "complete";
        res.end("ok");
      });
      req.once("close", () => (upstreamSaw ??= "aborted"));
    });
    const { socket } = await openTunnel(proxy, `127.0.0.1:${sink.port}`);
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    secure.write(
      `POST /upload HTTP/1.1\r\nHost: 127.0.0.1:${sink.port}\r\ncontent-type: application/octet-stream\r\ncontent-length: 1000000\r\n\r\n`,
    );
    secure.write(Buffer.alloc(64 * 1024, 0x63));
    await waitUntil(() => received === 64 * 1024, { what: "the first 64 KiB to reach the upstream" });
    socket.destroy(); // the client vanishes mid-upload
    await waitUntil(() => upstreamSaw !== null && sink.open === 0, { what: "the upstream request to end" });
    expect(upstreamSaw).toBe("aborted");
    expect(received).toBe(64 * 1024);
    const record = await proxy.waitForRecord(httpRecord(sink.port, "/upload"));
    expect(record).toMatchObject({ method: "POST", status: null, requestBytes: 64 * 1024, error: { code: "client_aborted" } });
    expect((record.error as Failure).message).toMatch(/request body/);
    await stillServes();
  });

  it("an upstream that closes every connection: each new upstream TLS connection is cheap (one shared TLS context)", async () => {
    const closing = await upstream((req, res) => {
      req.resume();
      res.setHeader("connection", "close");
      res.end("ok");
    });
    const a = agent();
    expect((await fetch(`${closing.url}/warm`, { dispatcher: a })).status).toBe(200);
    const N = 20;
    const cpu = process.cpuUsage();
    for (let i = 0; i < N; i++) expect(await (await fetch(`${closing.url}/c?i=${i}`, { dispatcher: a })).text()).toBe("ok");
    const used = process.cpuUsage(cpu);
    const msEach = (used.user + used.system) / 1000 / N;
    expect(closing.accepted).toBe(N + 1);
    // Everything here is in this process (client, proxy, upstream). Rebuilding a context from the ~270 trusted
    // roots for each connection cost ~80 ms on its own; with one context a connection costs a few ms.
    console.log(`[faults] new upstream TLS connection: ${msEach.toFixed(1)} ms of CPU each (client, proxy and upstream)`);
    expect(msEach).toBeLessThan(35);
  });

  it("a client that sends CONNECT and closes its side without a byte more: the proxy closes the connection too", async () => {
    const { status, socket } = await openTunnel(proxy, `127.0.0.1:${normal.port}`);
    expect(status).toBe(200);
    const closedByProxy = new Promise<string>((resolve) => {
      socket.once("end", () => resolve("end"));
      socket.once("close", () => resolve("close"));
    });
    socket.resume();
    socket.end(); // FIN: half-closed, still reading
    expect(await Promise.race([closedByProxy, sleep(3_000).then(() => "still open")])).not.toBe("still open");
    socket.destroy();
    await stillServes();
  });

  describe("an upstream that closes idle keep-alive connections", () => {
    it("after its (short, advertised) idle timeout: the next request goes out on a fresh connection", async () => {
      const u = await upstream((req, res) => {
        req.resume();
        res.end("ok");
      }, { keepAliveTimeout: 200 });
      const a = agent();
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${u.url}/ka?i=${i}`, { dispatcher: a });
        expect(await res.text()).toBe("ok");
        await waitUntil(() => u.open === 0, { what: "the upstream to close the idle connection" });
      }
      expect(u.accepted).toBe(3);
      const records = await proxy.waitForRecords(httpRecord(u.port, "/ka"), 3);
      expect(records.every((r) => r.status === 200 && r.error === undefined)).toBe(true);
    });

    /**
     * The race a keep-alive pool cannot see coming: the server closes the connection just as the next
     * request goes out on it (no `Keep-Alive: timeout=` hint, or the FIN still in flight). Simulated
     * deterministically: every connection answers one request and is dropped when a second arrives.
     */
    it("just as a request goes out on it: an idempotent request is retried on a fresh connection, a POST gets 502", async () => {
      const pki = testPki();
      const sockets = new Set<net.Socket>();
      let requests = 0;
      const server = tls.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (s) => {
        sockets.add(s);
        s.once("close", () => sockets.delete(s));
        s.on("error", () => undefined);
        let onThisConnection = 0;
        let buffered = "";
        s.on("data", (c: Buffer) => {
          buffered += c.toString("latin1");
          for (let end = buffered.indexOf("\r\n\r\n"); end >= 0; end = buffered.indexOf("\r\n\r\n")) {
            const head = buffered.slice(0, end);
            const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
            buffered = buffered.slice(end + 4 + length);
            requests++;
            if (++onThisConnection === 1) s.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
            else s.destroy();
          }
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      cleanups.push(
        () =>
          new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy();
            server.close(() => resolve());
          }),
      );
      const port = (server.address() as net.AddressInfo).port;
      const a = agent();
      expect((await fetch(`https://127.0.0.1:${port}/race?i=1`, { dispatcher: a })).status).toBe(200);
      // The proxy's pooled connection is now doomed: a GET on it must still succeed.
      const get = await fetch(`https://127.0.0.1:${port}/race?i=2`, { dispatcher: a });
      expect(get.status).toBe(200);
      expect(await get.text()).toBe("ok");
      const getRecord = await proxy.waitForRecord(httpRecord(port, "/race?i=2"));
      expect(getRecord).toMatchObject({ status: 200, statusSource: "upstream" });
      expect(getRecord.error).toBeUndefined();
      // A POST is not replayed (it may have been applied): the client gets a 502 and decides itself.
      const post = await fetch(`https://127.0.0.1:${port}/race?i=3`, { dispatcher: a, method: "POST", body: "{}", headers: { "content-type": "application/json" } });
      expect(post.status).toBe(502);
      expect(await post.text()).toMatch(/^mcp-wiretap: 127\.0\.0\.1:\d+: (connection reset|socket hang up)\n$/);
      const postRecord = await proxy.waitForRecord(httpRecord(port, "/race?i=3"));
      expect(postRecord).toMatchObject({ status: 502, statusSource: "proxy", error: { code: "upstream_reset" } });
      // And the one after it works again.
      expect((await fetch(`https://127.0.0.1:${port}/race?i=4`, { dispatcher: a })).status).toBe(200);
      await stillServes();
    });
  });
});

/**
 * Connect and handshake timeouts, on a ProxyServer of its own (the CLI has no option for them: 30 s).
 */
describe("connect timeouts (ProxyServer with connectTimeoutMs: 600)", () => {
  const CONNECT_TIMEOUT_MS = 600;
  let dir: string;
  let server: ProxyServer;
  let address: { host: string; port: number };
  let caPem: string;
  let records: Record<string, unknown>[] = [];
  let normal: TestUpstream;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-faults-"));
    const ca = await loadOrCreateCa(path.join(dir, "ca"));
    caPem = ca.certPem;
    const issuer = await LeafIssuer.create(ca);
    const lines = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n")) if (line) records.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const logger = pino({ base: undefined, formatters: { level: (label) => ({ level: label }) } }, lines);
    server = new ProxyServer({
      host: "127.0.0.1",
      port: 0,
      report: recordProxyEvents(logger),
      addons: [httpRecordAddon(logger)],
      secureContextFor: (host) => issuer.secureContextFor(host),
      upstreamCa: [testPki().caPem],
      insecureUpstream: false,
      passthrough: [],
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    });
    address = await server.listen();
    normal = await startHttpsUpstream();
  });

  afterAll(async () => {
    await server?.close(100);
    await normal?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function through(url: string): Promise<{ status: number; text: string; ms: number }> {
    const a = new ProxyAgent({ uri: `http://127.0.0.1:${address.port}`, requestTls: { ca: caPem } });
    const startedAt = Date.now();
    try {
      const res = await fetch(url, { dispatcher: a, signal: AbortSignal.timeout(10_000) });
      return { status: res.status, text: await res.text(), ms: Date.now() - startedAt };
    } finally {
      await a.destroy();
    }
  }

  const recordFor = async (port: number): Promise<Record<string, unknown>> => {
    await waitUntil(() => records.some((r) => r.event === "http" && r.server === `127.0.0.1:${port}`), { what: `the record for port ${port}` });
    return records.find((r) => r.event === "http" && r.server === `127.0.0.1:${port}`)!;
  };

  it("a target whose TCP connect never completes (SYN dropped): 502 after the connect timeout, upstream_timeout", async () => {
    const hole = await startBlackhole();
    try {
      const { status, text, ms } = await through(`https://127.0.0.1:${hole.port}/mcp`);
      expect(status).toBe(502);
      expect(text).toBe(`mcp-wiretap: 127.0.0.1:${hole.port}: no connection within the connect timeout\n`);
      expect(ms).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + 5_000);
      expect(await recordFor(hole.port)).toMatchObject({ level: "warn", status: 502, statusSource: "proxy", error: { code: "upstream_timeout" } });
    } finally {
      await hole.close();
    }
    expect((await through(`${normal.url}/bytes?n=5`)).status).toBe(200);
  });

  it("a target that accepts TCP but never finishes the TLS handshake: 502 after the connect timeout, and the socket is closed", async () => {
    const stall = await startTlsStall();
    try {
      const { status, text, ms } = await through(`https://127.0.0.1:${stall.port}/mcp`);
      expect(status).toBe(502);
      expect(text).toMatch(/no (connection|TLS handshake) within the connect timeout/);
      expect(ms).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 50);
      expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS + 5_000);
      await waitUntil(() => stall.accepted === 1 && stall.closed === 1, { what: "the stalled upstream connection to close" });
      expect(await recordFor(stall.port)).toMatchObject({ status: 502, error: { code: "upstream_timeout" } });
    } finally {
      await stall.close();
    }
    expect((await through(`${normal.url}/bytes?n=5`)).status).toBe(200);
  });

  it("a plain-HTTP target that accepts TCP and never answers is not cut off by the connect timeout (the client waits)", async () => {
    const stall = await startTlsStall(); // accepts and reads, never answers: a stalled HTTP server too
    try {
      const a = new ProxyAgent({ uri: `http://127.0.0.1:${address.port}` });
      const controller = new AbortController();
      const pending = fetch(`http://127.0.0.1:${stall.port}/slow`, { dispatcher: a, signal: controller.signal });
      pending.catch(() => undefined);
      await waitUntil(() => stall.accepted === 1, { what: "the connection" });
      await sleep(CONNECT_TIMEOUT_MS * 2);
      expect(stall.closed).toBe(0);
      controller.abort();
      await expect(pending).rejects.toThrow();
      await waitUntil(() => stall.closed === 1, { what: "the upstream connection to close after the client gave up" });
      await a.destroy();
      expect(await recordFor(stall.port)).toMatchObject({ status: null, error: { code: "client_aborted" } });
    } finally {
      await stall.close();
    }
  });
});

describe("--connect-timeout", () => {
  it("sets the connect timeout of the CLI proxy (502 after it, for an upstream that never finishes TLS)", async () => {
    const proxy = await startCliProxy(["--connect-timeout", "500"]);
    const stall = await startTlsStall();
    try {
      const a = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
      const startedAt = Date.now();
      const res = await fetch(`https://127.0.0.1:${stall.port}/mcp`, { dispatcher: a, signal: AbortSignal.timeout(10_000) });
      const ms = Date.now() - startedAt;
      await a.destroy();
      expect(res.status).toBe(502);
      expect(await res.text()).toMatch(/within the connect timeout/);
      expect(ms).toBeGreaterThanOrEqual(450);
      expect(ms).toBeLessThan(5_000);
    } finally {
      await stall.close();
      await proxy.dispose();
    }
  });
});
