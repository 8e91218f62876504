/**
 * An event stream sent through a rewriter (enforce mode, --intercept) on an exchange whose read gate is
 * closed from its start (its peer is past its share of what waits): the upstream is not read until it opens.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TapFanOut } from "../../src/proxy/addon-chain.js";
import { ExchangeRecord } from "../../src/proxy/exchange-record.js";
import { sendResponse } from "../../src/proxy/response-writer.js";
import { waitUntil } from "../helpers/wait-until.js";

const EVENTS = 64;
const EVENT = `data: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { pad: "x".repeat(1024) } })}\n\n`;

describe("an event stream on an exchange paused from its start", () => {
  let upstream: http.Server;
  let front: http.Server;
  let events = 0;
  let release: (() => void) | null = null;

  beforeAll(async () => {
    upstream = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (let i = 0; i < EVENTS; i++) res.write(EVENT);
      res.end();
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const upPort = (upstream.address() as AddressInfo).port;
    front = http.createServer((req, res) => {
      const ex = new ExchangeRecord("reverse", { address: "127.0.0.1", port: 1, tls: null }, { host: "127.0.0.1", port: upPort, secure: false, tls: null, insecure: false }, { method: "GET", path: "/", httpVersion: "1.1", headers: {} });
      release = ex.pauseReading();
      ex.rewriteResponse({ kind: "events", maxEventBytes: 64 * 1024, event: (raw) => (events++, raw) });
      http.get({ host: "127.0.0.1", port: upPort, path: "/" }, (upRes) => {
        ex.response = { status: upRes.statusCode!, statusMessage: upRes.statusMessage ?? "", headers: upRes.headers, rawHeaders: upRes.rawHeaders, source: "upstream" };
        sendResponse(ex, upRes, res, new TapFanOut([], () => undefined));
      });
    });
    await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
  });

  afterAll(async () => {
    await new Promise((r) => front.close(r));
    await new Promise((r) => upstream.close(r));
  });

  it("reads no event until the gate opens, then every one", async () => {
    const port = (front.address() as AddressInfo).port;
    let text = "";
    const done = new Promise<void>((resolve) =>
      http.get({ host: "127.0.0.1", port, path: "/" }, (res) => {
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", resolve);
      }),
    );
    await waitUntil(() => release !== null, { timeoutMs: 5_000, what: "the exchange" });
    await new Promise((r) => setTimeout(r, 100));
    expect(events).toBe(0);
    release!();
    await done;
    expect(events).toBe(EVENTS);
    expect(text).toBe(EVENT.repeat(EVENTS));
  });
});
