/**
 * Slow and half-open clients against the real proxy (in-process): request heads sent a byte at a time (as
 * absolute-URI requests and inside a decrypted tunnel), CONNECT tunnels that never send a ClientHello, and
 * ClientHellos cut short. While they hang on, the proxy must keep serving everyone else promptly; a slow but
 * complete request is still served; and `stop()` closes what they hold without waiting on them.
 *
 * The time is bounded (a few seconds of slowness, not the minutes a real slowloris takes). The cut-offs
 * themselves (60 s for a request head, 30 s for a tunnel's handshake) are tested with short values in
 * timeouts.e2e.test.ts.
 */
import net from "node:net";
import { fetch, type ProxyAgent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patternBytes, startHttpUpstream, startHttpsUpstream, type TestUpstream } from "../../helpers/https-upstream.js";
import { openTunnel, parseRawResponse, readAll, startTestProxy, tlsThroughTunnel, type TestProxy } from "../../helpers/proxy-harness.js";
import { proxyAgent } from "./input-kit.js";

const SLOW_MS = 2_500;
const BYTE_EVERY_MS = 200;

describe("slowloris and half-open clients", () => {
  let proxy: TestProxy;
  let upstream: TestUpstream;
  let plain: TestUpstream;
  let agent: ProxyAgent;
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startHttpsUpstream();
    plain = await startHttpUpstream();
    agent = proxyAgent(proxy);
  });

  afterAll(async () => {
    for (const t of timers) clearInterval(t);
    for (const s of sockets) s.destroy();
    await agent?.close();
    await upstream?.close();
    await plain?.close();
    await proxy?.stop();
  });

  function connect(): Promise<net.Socket> {
    const socket = net.connect(proxy.port, proxy.host);
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("close", () => sockets.delete(socket));
    return new Promise((resolve, reject) => {
      socket.once("connect", () => resolve(socket));
      socket.once("error", reject);
    });
  }

  /** Writes `text` one byte every BYTE_EVERY_MS (stops at the end of the text or when the socket closes). */
  function dribble(socket: net.Socket | import("node:tls").TLSSocket, text: string): { sent(): number } {
    let i = 0;
    const timer = setInterval(() => {
      if (i >= text.length || socket.destroyed) {
        clearInterval(timer);
        timers.delete(timer);
        return;
      }
      socket.write(text[i++]!);
    }, BYTE_EVERY_MS);
    timers.add(timer);
    return { sent: () => i };
  }

  async function normalRequest(n: number): Promise<number> {
    const started = Date.now();
    const res = await fetch(`${upstream.url}/bytes?n=${n}&seed=${n}`, { dispatcher: agent });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(patternBytes(n, n))).toBe(true);
    return Date.now() - started;
  }

  it("keeps serving others promptly while slow and half-open clients hang on", async () => {
    const head = (path: string) => `GET http://127.0.0.1:${plain.port}${path} HTTP/1.1\r\nHost: 127.0.0.1:${plain.port}\r\nX-Pad: ${"p".repeat(200)}\r\n\r\n`;
    // 40 plain connections sending their request head a byte at a time.
    const slow = await Promise.all(Array.from({ length: 40 }, () => connect()));
    const dribbles = slow.map((s, i) => dribble(s, head(`/slow-${i}`)));
    // One inside a decrypted tunnel.
    const tunnel = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    sockets.add(tunnel.socket);
    const tunnelled = await tlsThroughTunnel(tunnel.socket, "127.0.0.1", proxy.caPem);
    dribble(tunnelled, `GET /bytes?n=5 HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\nX-Pad: ${"p".repeat(200)}\r\n\r\n`);
    // 20 CONNECT tunnels that never send a byte, and 10 that send 5 bytes of a TLS record header and stop.
    const halfOpen = await Promise.all(Array.from({ length: 30 }, () => openTunnel(proxy, `127.0.0.1:${upstream.port}`)));
    for (const t of halfOpen) {
      expect(t.status).toBe(200);
      sockets.add(t.socket);
    }
    for (const t of halfOpen.slice(20)) t.socket.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]));

    // Meanwhile, everyone else is served as usual.
    const latencies: number[] = [];
    const until = Date.now() + SLOW_MS;
    for (let n = 1000; Date.now() < until; n += 7) latencies.push(await normalRequest(n));
    expect(latencies.length).toBeGreaterThan(5);
    expect(Math.max(...latencies)).toBeLessThan(2_000);

    // The slow ones are still connected (no header timeout cut them off within these seconds) and halfway.
    expect(slow.every((s) => !s.destroyed)).toBe(true);
    expect(dribbles.every((d) => d.sent() > 5)).toBe(true);
    expect(halfOpen.every((t) => !t.socket.destroyed)).toBe(true);
  }, 20_000);

  it("a slow but complete request is served", async () => {
    const socket = await connect();
    const text = `GET http://127.0.0.1:${plain.port}/bytes?n=3 HTTP/1.1\r\nHost: 127.0.0.1:${plain.port}\r\nConnection: close\r\n\r\n`;
    // Quicker than above (whole head in ~1.5 s): one byte per 15 ms.
    const done = readAll(socket, 10_000);
    for (const ch of text) {
      socket.write(ch);
      await new Promise((r) => setTimeout(r, 15));
    }
    const answer = parseRawResponse(await done);
    expect(answer.status).toBe(200);
    expect(answer.body.equals(patternBytes(3, 1))).toBe(true);
  }, 15_000);

  it("stop() closes what the slow and half-open clients hold, without waiting for them", async () => {
    expect(sockets.size).toBeGreaterThan(50);
    const closedAll = Promise.all([...sockets].map((s) => new Promise((resolve) => (s.destroyed ? resolve(null) : s.once("close", resolve)))));
    const started = Date.now();
    const records = await proxy.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    await closedAll;
    if (process.env.DEBUG_INPUT) console.log(JSON.stringify(records.filter((r) => r.event !== "http").map((r) => [r.event, r.reason ?? r.err ?? null])));
    expect(records.at(-1)).toMatchObject({ event: "stop" });
    for (const r of records) expect(typeof r.event).toBe("string");
  }, 15_000);
});
