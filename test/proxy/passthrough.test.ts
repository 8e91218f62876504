/**
 * --passthrough: matching hosts are tunnelled without decryption (the client talks TLS with the real
 * server and sees its certificate); other hosts are still intercepted.
 */
import { X509Certificate } from "node:crypto";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patternBytes, startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { closedPort, openTunnel, rawRequest, startTestProxy, tlsThroughTunnel, type TestProxy } from "../helpers/proxy-harness.js";
import { testPki } from "../helpers/test-pki.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

describe("pass-through hosts", () => {
  let proxy: TestProxy;
  let upstream: TestUpstream;

  beforeAll(async () => {
    proxy = await startTestProxy({ passthrough: ["127.0.0.*"] });
    upstream = await startHttpsUpstream();
  });

  afterAll(async () => {
    await upstream?.close();
    await proxy?.stop();
  });

  it("is not decrypted: the client sees the upstream's own certificate", async () => {
    const { status, socket } = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    expect(status).toBe(200);
    // Trusting only the upstream's CA (not the proxy's) and it verifies: this is the real server.
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", testPki().caPem);
    const peer = secure.getPeerX509Certificate()!;
    expect(peer.fingerprint256).toBe(new X509Certificate(testPki().serverCertPem).fingerprint256);
    expect(peer.issuer).toContain("mcp-wiretap TEST UPSTREAM CA");
    const res = await rawRequest(secure, `GET /bytes?n=20000&seed=6 HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(200);
    expect(res.body.equals(patternBytes(20_000, 6))).toBe(true);

    const record = await proxy.waitForRecord((r) => r.event === "tunnel" && r.server === `127.0.0.1:${upstream.port}`);
    expect(record).toMatchObject({ mode: "passthrough", level: "info" });
    expect(record.bytesUp).toBeGreaterThan(0);
    expect(record.bytesDown).toBeGreaterThan(20_000);
    expect(record.error).toBeUndefined();
    // No decrypted exchange was recorded for it.
    const http = (await proxy.records()).filter((r) => r.event === "http" && r.server === `127.0.0.1:${upstream.port}`);
    expect(http).toHaveLength(0);
    expectRecordsMatchSchemas(await proxy.records(), "tunnel");
  });

  it("a client trusting only the proxy's CA fails against a pass-through host", async () => {
    const { socket } = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    await expect(tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem)).rejects.toThrow(/certificate/i);
    socket.destroy();
  });

  it("works for an ordinary client trusting the upstream's CA (undici)", async () => {
    const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: testPki().caPem } });
    try {
      const body = patternBytes(50_000, 12);
      const res = await fetch(`${upstream.url}/echo`, { method: "POST", body, dispatcher: agent });
      expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);
    } finally {
      await agent.close();
    }
    await proxy.waitForRecords((r) => r.event === "tunnel" && r.server === `127.0.0.1:${upstream.port}`, 3);
  });

  it("intercepts hosts that do not match", async () => {
    // "localhost" does not match 127.0.0.*: decrypted, with the proxy's certificate.
    const { status, socket } = await openTunnel(proxy, `localhost:${upstream.port}`);
    expect(status).toBe(200);
    const secure = await tlsThroughTunnel(socket, "localhost", proxy.caPem);
    expect(secure.getPeerX509Certificate()!.checkIssued(new X509Certificate(proxy.caPem))).toBe(true);
    const res = await rawRequest(secure, `GET /bytes?n=10 HTTP/1.1\r\nHost: localhost:${upstream.port}\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(200);
    await proxy.waitForRecord((r) => r.event === "http" && r.mode === "mitm" && r.server === `localhost:${upstream.port}`);
  });

  it("a pass-through tunnel still open at stop() is closed and on the record", async () => {
    const own = await startTestProxy({ passthrough: ["127.0.0.1"], graceMs: 100 });
    const { socket } = await openTunnel(own, `127.0.0.1:${upstream.port}`);
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", testPki().caPem);
    const closed = new Promise<void>((resolve) => secure.once("close", () => resolve()));
    const records = await own.stop();
    await closed;
    const tunnel = records.find((r) => r.event === "tunnel" && r.server === `127.0.0.1:${upstream.port}`);
    expect(tunnel).toMatchObject({ mode: "passthrough" });
    expect(tunnel!.bytesDown).toBeGreaterThan(0);
    expectRecordsMatchSchemas(records, "start", "tunnel", "stop");
  });

  it("answers 502 to CONNECT when the pass-through upstream is unreachable, on the record", async () => {
    const port = await closedPort();
    const { status, response } = await openTunnel(proxy, `127.0.0.1:${port}`);
    expect(status).toBe(502);
    expect(response.body.toString()).toMatch(/^mcp-wiretap: cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED\n$/);
    const record = await proxy.waitForRecord((r) => r.event === "tunnel" && r.server === `127.0.0.1:${port}`);
    expect(record).toMatchObject({ mode: "passthrough", error: "ECONNREFUSED", bytesDown: 0 });
    expectRecordsMatchSchemas([record], "tunnel");
  });
});
