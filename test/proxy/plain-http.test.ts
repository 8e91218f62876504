/**
 * Plain HTTP through the proxy: absolute-URI requests (HTTP_PROXY style) and plain HTTP inside a CONNECT
 * tunnel (what undici's ProxyAgent does for http:// URLs, and `curl -p`).
 */
import http from "node:http";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patternBytes, startHttpUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import {
  closedPort,
  curl,
  hasCurl,
  lastCurlHead,
  parseRawResponse,
  rawProxyExchange,
  startTestProxy,
  type TestProxy,
} from "../helpers/proxy-harness.js";
import { skipNote } from "../helpers/skip-note.js";

/** One absolute-URI request to the proxy with node:http (no proxy agent involved). */
function viaAbsoluteUri(
  proxy: TestProxy,
  url: string,
  init: { method?: string; body?: Buffer; headers?: http.OutgoingHttpHeaders } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: proxy.host,
      port: proxy.port,
      method: init.method ?? "GET",
      path: url,
      headers: { host: new URL(url).host, ...init.headers },
      agent: false,
    });
    req.on("error", reject);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.end(init.body);
  });
}

skipNote(import.meta.url, !hasCurl, "curl is not installed");
describe("plain HTTP through the proxy", () => {
  let proxy: TestProxy;
  let upstream: TestUpstream;

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startHttpUpstream();
  });

  afterAll(async () => {
    await upstream?.close();
    await proxy?.stop();
  });

  it("forwards an absolute-URI GET and keeps its content-length", async () => {
    const res = await viaAbsoluteUri(proxy, `${upstream.url}/bytes?n=100000&seed=4`);
    expect(res.status).toBe(200);
    expect(res.headers["content-length"]).toBe("100000");
    expect(res.headers["transfer-encoding"]).toBeUndefined();
    expect(res.body.equals(patternBytes(100_000, 4))).toBe(true);
    // The upstream got an origin-form request.
    expect(upstream.requests.at(-1)?.url).toBe("/bytes?n=100000&seed=4");
    const record = await proxy.waitForRecord((r) => r.event === "http" && r.path === "/bytes?n=100000&seed=4");
    expect(record).toMatchObject({ mode: "plain-proxy", server: `127.0.0.1:${upstream.port}`, status: 200, responseBytes: 100_000, tls: null });
  });

  it("forwards an absolute-URI POST body both ways byte for byte", async () => {
    const body = patternBytes(300_000, 8);
    const res = await viaAbsoluteUri(proxy, `${upstream.url}/echo`, { method: "POST", body });
    expect(res.status).toBe(200);
    expect(res.body.equals(body)).toBe(true);
    expect(res.headers["x-upstream-saw-host"]).toBe(`127.0.0.1:${upstream.port}`);
    expect(upstream.requests.at(-1)?.body.equals(body)).toBe(true);
  });

  it("keeps a chunked response chunked", async () => {
    const res = await viaAbsoluteUri(proxy, `${upstream.url}/chunked?n=5000`);
    expect(res.headers["transfer-encoding"]).toBe("chunked");
    expect(res.headers["content-length"]).toBeUndefined();
    expect(res.body.equals(patternBytes(5000))).toBe(true);
  });

  it("drops hop-by-hop request headers and forwards the others unchanged", async () => {
    await viaAbsoluteUri(proxy, `${upstream.url}/bytes?n=1`, {
      headers: { "proxy-authorization": "Basic c2VjcmV0", "x-keep": "Kept Value", connection: "x-drop", "x-drop": "1" },
    });
    const seen = upstream.requests.at(-1)!;
    expect(seen.headers["x-keep"]).toBe("Kept Value");
    expect(seen.headers["proxy-authorization"]).toBeUndefined();
    expect(seen.headers["x-drop"]).toBeUndefined();
  });

  it("answers 502 with a reason when the upstream port is closed", async () => {
    const port = await closedPort();
    const res = await viaAbsoluteUri(proxy, `http://127.0.0.1:${port}/x`);
    expect(res.status).toBe(502);
    expect(res.body.toString()).toBe(`mcp-wiretap: 127.0.0.1:${port}: connection refused\n`);
    const record = await proxy.waitForRecord((r) => r.event === "http" && r.server === `127.0.0.1:${port}`);
    expect(record).toMatchObject({ mode: "plain-proxy", status: 502, error: { code: "upstream_connect" } });
  });

  it("refuses an origin-form request sent to the proxy itself, on the record", async () => {
    const answer = parseRawResponse(await rawProxyExchange(proxy, "GET /bytes HTTP/1.1\r\nHost: somewhere\r\nConnection: close\r\n\r\n"));
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).toMatch(/^mcp-wiretap: this is a proxy/);
    await proxy.waitForRecord((r) => r.event === "refused" && r.stage === "request" && r.status === 400 && r.host === "somewhere");
  });

  it("tunnels plain HTTP through CONNECT (undici ProxyAgent with an http:// URL)", async () => {
    // proxyTunnel: undici sends http:// URLs as absolute-URI requests otherwise.
    const agent = new ProxyAgent({ uri: proxy.url, proxyTunnel: true });
    try {
      const res = await fetch(`${upstream.url}/bytes?n=70000&seed=2`, { dispatcher: agent });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(patternBytes(70_000, 2))).toBe(true);
      const echo = await fetch(`${upstream.url}/echo`, { method: "POST", body: "through the tunnel", dispatcher: agent });
      expect(await echo.text()).toBe("through the tunnel");
    } finally {
      await agent.close();
    }
    const records = await proxy.waitForRecords((r) => r.event === "http" && r.mode === "plain-connect", 2);
    expect(records[0]).toMatchObject({ server: `127.0.0.1:${upstream.port}`, path: "/bytes?n=70000&seed=2", status: 200, responseBytes: 70_000 });
  });

  it.skipIf(!hasCurl)("works with curl -x (absolute URI) and curl -p -x (CONNECT)", async () => {
    const direct = await curl(["-sS", "-x", proxy.url, "-D", "-", "-o", "/dev/null", `${upstream.url}/bytes?n=1000`]);
    expect(direct.code).toBe(0);
    const head = lastCurlHead(direct.stdout);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("1000");

    const tunnelled = await curl(["-sS", "-p", "-x", proxy.url, "-D", "-", "-o", "/dev/null", `${upstream.url}/chunked?n=1000`]);
    expect(tunnelled.code).toBe(0);
    expect(tunnelled.stdout).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n/);
    const tunnelHead = lastCurlHead(tunnelled.stdout);
    expect(tunnelHead.status).toBe(200);
    expect(tunnelHead.headers.get("transfer-encoding")).toBe("chunked");
    await proxy.waitForRecord((r) => r.event === "http" && r.mode === "plain-connect" && r.path === "/chunked?n=1000");
  });
});
