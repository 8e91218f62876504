/**
 * Exchanges that break off: a client leaving mid-stream, an upstream dying mid-response.
 */
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { openTunnel, startTestProxy, tlsThroughTunnel, type LogRecord, type TestProxy } from "../helpers/proxy-harness.js";
import { testPki } from "../helpers/test-pki.js";
import { waitUntil } from "../helpers/wait-until.js";

/** An HTTPS upstream that starts a response and then resets the connection. */
async function startDyingUpstream(how: "reset" | "close"): Promise<{ port: number; close(): Promise<void> }> {
  const pki = testPki();
  const sockets = new Set<Socket>();
  const server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (req, res) => {
    const chunked = req.url?.startsWith("/chunked");
    res.writeHead(200, { "content-type": "application/octet-stream", ...(chunked ? {} : { "content-length": "100000" }) });
    res.write(Buffer.alloc(1000, 0x61));
    setTimeout(() => {
      // A TCP reset of the raw connection (resetAndDestroy works on TCP sockets, not on TLS ones), or a
      // plain close before the body is complete.
      if (how === "reset") for (const s of sockets) s.resetAndDestroy();
      else req.socket.destroy();
    }, 50);
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("exchanges that break off", () => {
  let proxy: TestProxy;
  let upstream: TestUpstream;

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startHttpsUpstream();
  });

  afterAll(async () => {
    await upstream?.close();
    await proxy?.stop();
  });

  it("closes the upstream SSE stream when the client goes away, and records client_aborted", async () => {
    const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
    try {
      const controller = new AbortController();
      const res = await fetch(`${upstream.url}/sse-forever?interval=50`, { dispatcher: agent, signal: controller.signal });
      const reader = res.body!.getReader();
      let text = "";
      while (text.split("\n\n").length < 3) text += Buffer.from((await reader.read()).value ?? []).toString();
      expect(upstream.openSseStreams).toBe(1);
      controller.abort();
      await reader.cancel().catch(() => undefined);
    } finally {
      await agent.destroy();
    }
    await waitUntil(() => upstream.openSseStreams === 0, { what: "the upstream SSE stream to close" });
    const record = await proxy.waitForRecord((r) => r.event === "http" && String(r.path).startsWith("/sse-forever"));
    expect(record).toMatchObject({ status: 200, level: "info", error: { code: "client_aborted" } });
    expect(record.responseBytes).toBeGreaterThan(0);
  });

  it("closes the upstream stream when the client's TCP connection just drops", async () => {
    const { socket } = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    secure.write(`GET /sse-forever?interval=50&raw=1 HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\n\r\n`);
    let got = "";
    await new Promise<void>((resolve) =>
      secure.on("data", (c: Buffer) => {
        got += c.toString();
        if (got.includes("id: 2")) resolve();
      }),
    );
    expect(upstream.openSseStreams).toBe(1);
    socket.destroy();
    await waitUntil(() => upstream.openSseStreams === 0, { what: "the upstream SSE stream to close" });
    await proxy.waitForRecord((r) => r.event === "http" && String(r.path).includes("raw=1") && (r.error as { code?: string })?.code === "client_aborted");
  });

  it("on stop(), an SSE stream still open is cut both ways and recorded as shutdown, before the stop record", async () => {
    const own = await startTestProxy({ graceMs: 200 });
    const agent = new ProxyAgent({ uri: own.url, requestTls: { ca: own.caPem } });
    let records: LogRecord[];
    try {
      const res = await fetch(`${upstream.url}/sse-forever?interval=50&stop=1`, { dispatcher: agent });
      const reader = res.body!.getReader();
      await reader.read();
      expect(upstream.openSseStreams).toBe(1);
      const drained = (async () => {
        for (;;) if ((await reader.read()).done) return "ended";
      })().catch(() => "broken");
      records = await own.stop("test");
      // The client must not mistake the cut-off stream for a complete one.
      expect(await drained).toBe("broken");
      await waitUntil(() => upstream.openSseStreams === 0, { what: "the upstream SSE stream to close" });
    } finally {
      await agent.destroy();
    }
    const stream = records.findIndex((r) => r.event === "http" && String(r.path).includes("stop=1"));
    expect(stream).toBeGreaterThan(0);
    expect(records[stream]).toMatchObject({ status: 200, error: { code: "shutdown" } });
    // Written before "stop" (by time). File order can still differ: the log sink's flush at stop writes what
    // is buffered while an asynchronous write is in flight (src/log/logger.ts, see the report).
    const stop = records.find((r) => r.event === "stop");
    expect(stop).toMatchObject({ reason: "test" });
    expect(Date.parse(String(records[stream]!.time))).toBeLessThanOrEqual(Date.parse(String(stop!.time)));
  });

  it.each([
    ["reset", "content-length", "/sized"],
    ["reset", "chunked", "/chunked"],
    ["close", "content-length", "/sized"],
    ["close", "chunked", "/chunked"],
  ] as const)("passes an upstream %s mid-response (%s) on to the client, on the record", async (how, _label, path) => {
    const dying = await startDyingUpstream(how);
    const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
    try {
      const res = await fetch(`https://127.0.0.1:${dying.port}${path}`, { dispatcher: agent });
      expect(res.status).toBe(200);
      // The client must see a broken body, never a short body that looks complete.
      await expect(res.arrayBuffer()).rejects.toThrow();
    } finally {
      await agent.destroy();
      await dying.close();
    }
    const record = await proxy.waitForRecord((r) => r.event === "http" && r.server === `127.0.0.1:${dying.port}`);
    expect(record).toMatchObject({ status: 200, level: "warn", error: { code: "upstream_reset" } });
    expect(record.responseBytes).toBe(1000);
  });
});
