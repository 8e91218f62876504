/**
 * WebSocket upgrades inside an intercepted tunnel are forwarded unchanged (handshake, subprotocol, frames)
 * once the upstream has answered 101.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { testPki } from "../helpers/test-pki.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

interface WsUpstream {
  port: number;
  upgrades: http.IncomingMessage[];
  close(): Promise<void>;
}

async function startWsUpstream(): Promise<WsUpstream> {
  const pki = testPki();
  const server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem });
  const sockets = new Set<Socket>();
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const upgrades: http.IncomingMessage[] = [];
  const wss = new WebSocketServer({
    server,
    handleProtocols: (protocols) => (protocols.has("mcp.v1") ? "mcp.v1" : false),
  });
  wss.on("headers", (_headers, req) => upgrades.push(req));
  wss.on("connection", (ws) => {
    ws.on("message", (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    upgrades,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** CONNECT through the proxy, then TLS trusting the proxy's CA: a socket ready for `ws`. */
async function tunnelTo(proxy: TestProxy, port: number): Promise<tls.TLSSocket> {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const req = http.request({ host: proxy.host, port: proxy.port, method: "CONNECT", path: `127.0.0.1:${port}`, agent: false });
    req.once("connect", (res, s) => (res.statusCode === 200 ? resolve(s) : reject(new Error(`CONNECT: ${res.statusCode}`))));
    req.once("error", reject);
    req.end();
  });
  const secure = tls.connect({ socket, host: "127.0.0.1", ca: proxy.caPem });
  await new Promise<void>((resolve, reject) => {
    secure.once("secureConnect", resolve);
    secure.once("error", reject);
  });
  return secure;
}

function nextMessage(ws: WebSocket): Promise<{ data: Buffer; isBinary: boolean }> {
  return new Promise((resolve, reject) => {
    ws.once("message", (data, isBinary) => resolve({ data: Buffer.from(data as Buffer), isBinary }));
    ws.once("error", reject);
  });
}

describe("WebSocket through the proxy", () => {
  let proxy: TestProxy;
  let upstream: WsUpstream;

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startWsUpstream();
  });

  afterAll(async () => {
    await upstream?.close();
    await proxy?.stop();
  });

  it("forwards the upgrade, the subprotocol and text and binary frames unchanged", async () => {
    const secure = await tunnelTo(proxy, upstream.port);
    const ws = new WebSocket(`wss://127.0.0.1:${upstream.port}/ws?x=1`, ["mcp.v1", "other"], {
      createConnection: () => secure,
      headers: { "x-client-header": "kept" },
    });
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once("open", resolve);
        ws.once("error", reject);
      });
      expect(ws.protocol).toBe("mcp.v1");

      ws.send("hello through the proxy");
      const text = await nextMessage(ws);
      expect(text).toEqual({ data: Buffer.from("hello through the proxy"), isBinary: false });

      const binary = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) & 0xff));
      ws.send(binary);
      const echoed = await nextMessage(ws);
      expect(echoed.isBinary).toBe(true);
      expect(echoed.data.equals(binary)).toBe(true);

      const seen = upstream.upgrades.at(-1)!;
      expect(seen.url).toBe("/ws?x=1");
      expect(seen.headers.host).toBe(`127.0.0.1:${upstream.port}`);
      expect(seen.headers["sec-websocket-protocol"]?.split(/,\s*/)).toEqual(["mcp.v1", "other"]);
      expect(seen.headers["x-client-header"]).toBe("kept");
      expect(seen.headers.upgrade).toBe("websocket");
    } finally {
      await new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once("close", () => resolve());
        ws.close(1000, "done");
      });
    }
    const record = await proxy.waitForRecord((r) => r.event === "websocket" && r.server === `127.0.0.1:${upstream.port}`);
    expect(record).toMatchObject({ status: 101, path: "/ws?x=1" });
    // The handshake is an exchange of its own on the record, linked to the websocket record by its flow.
    const handshake = await proxy.waitForRecord((r) => r.event === "http" && r.flow === record.flow);
    expect(handshake).toMatchObject({ method: "GET", path: "/ws?x=1", status: 101, statusSource: "upstream" });
    expect(record.bytesUp).toBeGreaterThan(70_000);
    expect(record.bytesDown).toBeGreaterThan(70_000);
    expectRecordsMatchSchemas(await proxy.records(), "websocket", "http");
  });

  it("answers an upgrade to an unreachable upstream with 502", async () => {
    const other = await startWsUpstream();
    const port = other.port;
    const secure = await tunnelTo(proxy, port);
    await other.close();
    const ws = new WebSocket(`wss://127.0.0.1:${port}/ws`, { createConnection: () => secure });
    const status = await new Promise<number>((resolve, reject) => {
      ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => reject(new Error("opened")));
      ws.once("error", (err) => reject(err));
    });
    expect(status).toBe(502);
    ws.terminate();
    // Nothing was upgraded: the exchange is on the record as an ordinary one that failed.
    const record = await proxy.waitForRecord((r) => r.event === "http" && r.server === `127.0.0.1:${port}`);
    expect(record).toMatchObject({ method: "GET", path: "/ws", status: 502, statusSource: "proxy", error: { code: "upstream_connect" } });
    expect((await proxy.records()).filter((r) => r.event === "websocket" && r.server === `127.0.0.1:${port}`)).toEqual([]);
  });
});
