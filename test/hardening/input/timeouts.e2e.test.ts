/**
 * The slow-client guards, with short values: a request head that trickles in is cut off (408), and a
 * CONNECT tunnel that never finishes its TLS handshake, or never says anything, is closed — each with a
 * record. Production values: 60 s and 30 s.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../../helpers/https-upstream.js";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";

let proxy: TestProxy;
let upstream: TestUpstream;
beforeAll(async () => {
  upstream = await startHttpsUpstream();
  proxy = await startTestProxy({ headersTimeoutMs: 400, handshakeTimeoutMs: 400 });
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

function connect(): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: proxy.host, port: proxy.port }, () => resolve(s));
    s.once("error", reject);
  });
}

function untilClosed(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
    socket.once("close", () => resolve(text));
  });
}

describe("slow-client guards", () => {
  it("cuts off a request head that does not arrive in time: 408 and a refused record", async () => {
    const s = await connect();
    const closed = untilClosed(s);
    s.write(`GET http://127.0.0.1:${upstream.port}/ HTTP/1.1\r\nHost: 127.0.0.1`);
    const trickle = setInterval(() => s.writable && s.write("x"), 100);
    const started = Date.now();
    const answer = await closed;
    clearInterval(trickle);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(Date.now() - started).toBeLessThan(5_000);
    await proxy.waitForRecord((r) => r.event === "refused" && String(r.reason).includes("ERR_HTTP_REQUEST_TIMEOUT"));
  });

  it("closes a CONNECT tunnel that never starts its TLS handshake, and one whose ClientHello is cut short", async () => {
    for (const first of ["", "\u0016\u0003\u0001\u0002\u0000\u0001"]) {
      const s = await connect();
      const closed = untilClosed(s);
      s.write(`CONNECT 127.0.0.1:${upstream.port} HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\n\r\n`);
      if (first) setTimeout(() => s.write(Buffer.from(first, "latin1")), 50);
      const started = Date.now();
      const answer = await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    const records = await proxy.waitForRecords((r) => r.event === "client_tls_error" && String(r.err).includes("within"), 2);
    expect(records[0]!.server).toBe(`127.0.0.1:${upstream.port}`);
  });

  it("keeps serving a prompt client meanwhile", async () => {
    const res = await fetch(`${proxy.url}/healthz`);
    expect(res.status).toBe(200);
  });
});
