/**
 * The engine (http-mitm-proxy) behind src/proxy/engine.ts: every request it would refuse on its own is
 * routed and recorded by the proxy, and the two private entry points the proxy still uses are pinned, so an
 * engine upgrade that renames or changes them fails here first.
 */
import http from "node:http";
import net from "node:net";
import { Proxy } from "http-mitm-proxy";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Engine, type EngineHandlers } from "../../src/proxy/engine.js";
import {
  openTunnel,
  parseRawResponse,
  rawProxyExchange,
  readAll,
  startTestProxy,
  tlsThroughTunnel,
  type TestProxy,
} from "../helpers/proxy-harness.js";
import { startRawUpstream, type RawUpstream } from "../hardening/input/input-kit.js";

describe("requests without a Host header (HTTP/1.0) are routed and recorded by the proxy", () => {
  let proxy: TestProxy;
  let secure: RawUpstream;

  beforeAll(async () => {
    proxy = await startTestProxy();
    secure = await startRawUpstream({ tls: true });
  });

  afterAll(async () => {
    await secure?.close();
    await proxy?.stop();
  });

  it("an origin-form HTTP/1.0 request on the proxy port is refused with our answer and a refused record", async () => {
    const answer = parseRawResponse(await rawProxyExchange(proxy, "GET /no-host HTTP/1.0\r\n\r\n"));
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).toContain("mcp-wiretap: this is a proxy");
    const record = await proxy.waitForRecord((r) => r.event === "refused" && r.stage === "request" && r.host === null);
    expect(record).toMatchObject({ level: "warn", status: 400, method: "GET", server: null });
  });

  it("an HTTP/1.0 request without Host inside a CONNECT tunnel is refused with a refused record", async () => {
    const before = secure.all().length;
    const { status, socket } = await openTunnel(proxy, secure.authority);
    expect(status).toBe(200);
    const tls = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    const done = readAll(tls);
    tls.write("GET /tunnel-no-host HTTP/1.0\r\n\r\n");
    const answer = parseRawResponse(await done);
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).toContain("request has no Host header");
    const record = await proxy.waitForRecord((r) => r.event === "refused" && r.reason === "request has no Host header");
    expect(record).toMatchObject({ status: 400, server: secure.authority, host: null });
    expect(secure.all().length).toBe(before);
  });

  it("a Host header the engine's own parser throws on (`http://[::1`) is refused on the record, and the proxy keeps serving", async () => {
    const answer = parseRawResponse(await rawProxyExchange(proxy, "GET /x HTTP/1.1\r\nHost: http://[::1\r\nConnection: close\r\n\r\n"));
    expect(answer.status).toBe(400);
    await proxy.waitForRecord((r) => r.event === "refused" && r.stage === "request" && r.host === "http://[::1");
    const health = parseRawResponse(await rawProxyExchange(proxy, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    expect(health.status).toBe(200);
  });

  it("the same Host header inside a CONNECT tunnel is refused (421) on the record", async () => {
    const { status, socket } = await openTunnel(proxy, secure.authority);
    expect(status).toBe(200);
    const tls = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    const done = readAll(tls);
    tls.write("GET /t HTTP/1.1\r\nHost: http://[::1\r\nConnection: close\r\n\r\n");
    expect(parseRawResponse(await done).status).toBe(421);
    await proxy.waitForRecord((r) => r.event === "refused" && r.status === 421 && r.host === "http://[::1" && r.server === secure.authority);
  });

  it("GET /healthz over HTTP/1.0 without Host is answered by the health check", async () => {
    const answer = parseRawResponse(await rawProxyExchange(proxy, "GET /healthz HTTP/1.0\r\n\r\n"));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toMatchObject({ status: "ok" });
  });
});

describe("reverse mode: an HTTP/1.0 request without Host", () => {
  it("is forwarded with the mapping's Host and recorded, as any other request on the reverse port", async () => {
    const plain = await startRawUpstream({ tls: false });
    const proxy = await startTestProxy({ reverse: [`:0=http://${plain.authority}`] });
    try {
      const answer = parseRawResponse(await rawProxyExchange({ host: proxy.host, port: proxy.reversePorts[0]! }, "GET /r HTTP/1.0\r\n\r\n"));
      expect(answer.status).toBe(200);
      expect(plain.all()).toMatch(/^GET \/r HTTP\/1\.1\r\n/);
      expect(plain.all().match(/^host:.*$/gim)).toEqual([`host: ${plain.authority}`]);
      await proxy.waitForRecord((r) => r.event === "http" && r.mode === "reverse" && r.path === "/r" && r.status === 200);
    } finally {
      await proxy.stop();
      await plain.close();
    }
  });
});

describe("the engine's private entry points (pinned against upgrades)", () => {
  it("the engine itself still refuses a request without a host before its hooks run (why engine.ts routes it past)", async () => {
    const engine = new Proxy();
    const onRequest = vi.fn();
    engine.onRequest(onRequest);
    const server = http.createServer((req, res) => engine._onHttpServerRequest(false, req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as net.AddressInfo).port;
      const answer = parseRawResponse(await rawProxyExchange({ host: "127.0.0.1", port }, "GET /x HTTP/1.0\r\n\r\n"));
      expect(answer.status).toBe(400);
      expect(onRequest).not.toHaveBeenCalled();
    } finally {
      server.close();
    }
  });

  it("dispatches through `_onHttpServerRequest` to `onRequest`, and a client error goes to `_onError` only", async () => {
    const seen: string[] = [];
    const errors: string[] = [];
    const handlers: EngineHandlers = {
      connect: () => undefined,
      upgrade: () => undefined,
      malformed: () => undefined,
      request: (req, res, target) => {
        seen.push(`${req.method} ${target}`);
        // The client goes away mid-body: the engine's error listener must report, and write nothing.
        req.once("error", () => undefined);
        req.socket.destroy();
        setTimeout(() => seen.push(`headersSent=${res.headersSent}`), 20);
      },
      error: (kind) => errors.push(kind),
    };
    const consoleError = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const engine = new Engine(handlers);
    const { port } = await engine.listen("127.0.0.1", 0);
    try {
      const socket = net.connect({ host: "127.0.0.1", port });
      socket.on("error", () => undefined);
      socket.write("POST http://127.0.0.1:9/pin HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 100\r\n\r\nabc");
      for (let i = 0; i < 200 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual(["POST http://127.0.0.1:9/pin", "headersSent=false"]);
      for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(errors).toContain("CLIENT_TO_PROXY_REQUEST_ERROR");
      expect(consoleError).not.toHaveBeenCalled();
    } finally {
      consoleError.mockRestore();
      engine.closeAll();
      await engine.close();
    }
  });
});
