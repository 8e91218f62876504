/**
 * Oversized and explosive bodies through the BUILT CLI proxy (a child process, so its memory is its own and
 * read from /proc/<pid>/status), over real TLS (CONNECT + interception) to an HTTPS upstream of the test PKI:
 * - a 100 MiB single-line SSE event, a 200 MiB JSON response and a 64 MiB JSON upload, generated streaming
 *   on one side and hashed while read on the other (never held whole in this process);
 * - a gzip bomb (1 GiB of zeros in ~1 MB) as a JSON response and a brotli bomb (1.25 GiB of zeros in a few
 *   hundred KB) as an event stream (stopped by the expansion ratio, not the 1 GiB stream cap).
 * Each is forwarded whole and unchanged (length and sha256 compared), inspection stops at its bound (the
 * `invalid` record says which), the proxy's RSS grows by less than 150 MiB, and it still serves afterwards.
 * Needs `npm run build` first (npm test does it).
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import zlib from "node:zlib";
import type { ProxyAgent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gzipOfZeros } from "../../body/gzip-bomb.js";
import type { LogRecord } from "../../helpers/proxy-harness.js";
import { testPki } from "../../helpers/test-pki.js";
import { MiB, fetchRaw, mcpHeaders, proxyAgent, rssOf, sampleRss, sha256, startCliProxy, type CliProxy } from "./input-kit.js";

const MAX_RSS_GROWTH = 150 * MiB;
const INSPECT = 8 * MiB; // the CLI's default --max-inspect-bytes

/** Seven different MiB of printable bytes (no CR/LF), cycled: a reordered or repeated MiB changes the hash. */
const BLOCKS = Array.from({ length: 7 }, (_, seed) => {
  const block = Buffer.alloc(MiB);
  let x = seed * 7919 + 1;
  for (let i = 0; i < MiB; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    block[i] = 0x61 + ((x >>> 16) % 26);
  }
  return block;
});

/** `prefix`, then `mebibytes` MiB of blocks, then `suffix`, written with backpressure; returns length and sha256. */
async function writeLarge(res: NodeJS.WritableStream, prefix: string, mebibytes: number, suffix: string): Promise<{ length: number; sha256: string }> {
  const hash = createHash("sha256");
  let length = 0;
  const write = async (chunk: Buffer): Promise<void> => {
    hash.update(chunk);
    length += chunk.length;
    if (!res.write(chunk)) await once(res, "drain");
  };
  await write(Buffer.from(prefix));
  for (let i = 0; i < mebibytes; i++) await write(BLOCKS[i % BLOCKS.length]!);
  await write(Buffer.from(suffix));
  return { length, sha256: hash.digest("hex") };
}

/** Brotli of `mebibytes` MiB of zeros, compressed streaming (quality 1: fast, and still ~5,000:1). */
async function brotliOfZeros(mebibytes: number): Promise<Buffer> {
  const zeros = Buffer.alloc(MiB);
  const compress = zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 } });
  const out: Buffer[] = [];
  compress.on("data", (c: Buffer) => out.push(c));
  const ended = once(compress, "end");
  for (let i = 0; i < mebibytes; i++) if (!compress.write(zeros)) await once(compress, "drain");
  compress.end();
  await ended;
  return Buffer.concat(out);
}

describe("large and explosive bodies (CLI proxy, memory from /proc)", () => {
  let proxy: CliProxy;
  let agent: ProxyAgent;
  let server: https.Server;
  let base: string;
  const sockets = new Set<Socket>();
  /** What the upstream wrote for each path, and what it read from each upload. */
  const sent = new Map<string, { length: number; sha256: string }>();
  const uploaded = new Map<string, { length: number; sha256: string }>();
  let gzipBomb: Buffer;
  let brBomb: Buffer;
  let baseline = 0;

  beforeAll(async () => {
    [gzipBomb, brBomb] = await Promise.all([Promise.resolve(gzipOfZeros(1024)), brotliOfZeros(1280)]);
    const pki = testPki();
    server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (req, res) => {
      void (async () => {
        const path = req.url ?? "/";
        if (req.method === "POST") {
          const hash = createHash("sha256");
          let length = 0;
          for await (const chunk of req as AsyncIterable<Buffer>) {
            hash.update(chunk);
            length += chunk.length;
          }
          uploaded.set(path, { length, sha256: hash.digest("hex") });
          const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { length } });
          res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) }).end(body);
        } else if (path.startsWith("/sse-100m")) {
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
          sent.set(path, await writeLarge(res, "event: message\ndata: ", 100, "\n\n"));
          res.end();
        } else if (path.startsWith("/json-200m")) {
          res.writeHead(200, { "content-type": "application/json", "content-length": String(200 * MiB + 4) });
          sent.set(path, await writeLarge(res, '["', 200, '"]'));
          res.end();
        } else if (path.startsWith("/gzip-bomb")) {
          res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(gzipBomb.length) });
          res.end(gzipBomb);
        } else if (path.startsWith("/br-bomb")) {
          res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "br", "content-length": String(brBomb.length) });
          res.end(brBomb);
        } else {
          const body = JSON.stringify({ jsonrpc: "2.0", id: 0, result: { ok: true } });
          res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) }).end(body);
        }
      })().catch(() => res.destroy());
    });
    server.on("connection", (s: Socket) => {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    proxy = await startCliProxy();
    agent = proxyAgent(proxy);
    // Warm up (TLS, leaf certificate, JIT) before the baseline.
    for (let i = 0; i < 3; i++) await expectStillServes();
    baseline = rssOf(proxy.pid);
  }, 60_000);

  afterAll(async () => {
    await agent?.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await proxy?.dispose();
  });

  async function expectStillServes(): Promise<void> {
    const res = await fetchRaw(agent, `${base}/ping`, { method: "GET", keep: true });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toMatchObject({ result: { ok: true } });
  }

  /**
   * The http record, and the rpc records once `complete` says they are all there. Decoding may go on after the
   * response has been forwarded (a bomb decodes for seconds on a loaded machine), hence the generous deadline.
   */
  async function recordsFor(path: string, complete: number | ((rpc: LogRecord[]) => boolean)): Promise<{ http: LogRecord; rpc: LogRecord[] }> {
    const http = await proxy.waitForRecord((r) => r.event === "http" && r.path === path, `http record for ${path}`, 20_000);
    const done = typeof complete === "number" ? (rpc: LogRecord[]) => rpc.length >= complete : complete;
    let rpc: LogRecord[] = [];
    for (const deadline = Date.now() + 40_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      rpc = (await proxy.records()).filter((r) => r.event === "rpc" && r.path === path);
      if (done(rpc)) break;
    }
    return { http, rpc };
  }

  /** Runs `transfer` while sampling the proxy's RSS; returns the growth over the baseline. */
  async function measured<T>(transfer: () => Promise<T>): Promise<{ result: T; growth: number; ms: number }> {
    const sampler = sampleRss(proxy.pid);
    const started = Date.now();
    const result = await transfer();
    const ms = Date.now() - started;
    const peak = sampler.stop();
    const name = expect.getState().currentTestName?.split(" > ").at(-1)?.split(":")[0];
    console.info(`[input] ${name}: proxy RSS baseline ${(baseline / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB, ${ms} ms`);
    return { result, growth: peak - baseline, ms };
  }

  it("a 100 MiB single-line SSE event: forwarded whole, dropped from inspection at 8 MiB", async () => {
    const path = "/sse-100m";
    const { result: res, growth } = await measured(() => fetchRaw(agent, `${base}${path}`, { headers: mcpHeaders({ accept: "text/event-stream" }) }));
    expect(res.status).toBe(200);
    expect({ length: res.length, sha256: res.sha256 }).toEqual(sent.get(path));
    expect(res.length).toBeGreaterThan(100 * MiB);
    expect(growth).toBeLessThan(MAX_RSS_GROWTH);
    const { http, rpc } = await recordsFor(path, 1);
    expect(http).toMatchObject({ status: 200, responseBytes: res.length });
    expect(rpc.map((r) => [r.kind, r.direction, String(r.reason).split(":")[0]])).toEqual([["invalid", "server_to_client", "event_too_large"]]);
    expect(String(rpc[0]!.reason)).toContain(`exceeds ${INSPECT} bytes`);
    await expectStillServes();
  });

  it("a 200 MiB JSON response: forwarded whole, not parsed past 8 MiB", async () => {
    const path = "/json-200m";
    const { result: res, growth } = await measured(() => fetchRaw(agent, `${base}${path}`, { headers: mcpHeaders() }));
    expect(res.status).toBe(200);
    expect({ length: res.length, sha256: res.sha256 }).toEqual(sent.get(path));
    expect(growth).toBeLessThan(MAX_RSS_GROWTH);
    const { http, rpc } = await recordsFor(path, 1);
    expect(http).toMatchObject({ status: 200, responseBytes: 200 * MiB + 4 });
    expect(rpc.map((r) => [r.kind, r.direction])).toEqual([["invalid", "server_to_client"]]);
    expect(String(rpc[0]!.reason)).toMatch(/^body_truncated: JSON body is larger than the inspection limit of 8388608 bytes/);
    await expectStillServes();
  });

  it("a 64 MiB JSON upload: the upstream receives it whole, not parsed past 8 MiB", async () => {
    const path = "/upload-64m";
    const hash = createHash("sha256");
    let length = 0;
    async function* body(): AsyncGenerator<Buffer> {
      for (const piece of [Buffer.from('["'), ...Array.from({ length: 64 }, (_, i) => BLOCKS[i % BLOCKS.length]!), Buffer.from('"]')]) {
        hash.update(piece);
        length += piece.length;
        yield piece;
      }
    }
    const { result: res, growth } = await measured(() => fetchRaw(agent, `${base}${path}`, { method: "POST", headers: mcpHeaders(), body: body(), keep: true }));
    expect(res.status).toBe(200);
    expect(uploaded.get(path)).toEqual({ length, sha256: hash.digest("hex") });
    expect(growth).toBeLessThan(MAX_RSS_GROWTH);
    const { http, rpc } = await recordsFor(path, 2);
    expect(http).toMatchObject({ status: 200, requestBytes: length });
    const invalid = rpc.filter((r) => r.kind === "invalid");
    expect(invalid.map((r) => [r.direction, String(r.reason).split(":")[0]])).toEqual([["client_to_server", "body_truncated"]]);
    await expectStillServes();
  });

  it("a gzip bomb (1 GiB of zeros) as a JSON response: forwarded as sent, decoding stopped at 8 MiB", async () => {
    const path = "/gzip-bomb";
    const { result: res, growth, ms } = await measured(() => fetchRaw(agent, `${base}${path}`, { headers: mcpHeaders() }));
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("gzip");
    expect({ length: res.length, sha256: res.sha256 }).toEqual({ length: gzipBomb.length, sha256: sha256(gzipBomb) });
    expect(growth).toBeLessThan(MAX_RSS_GROWTH);
    expect(ms).toBeLessThan(10_000);
    const { rpc } = await recordsFor(path, 1);
    // The JSON sink reads the decoder's `decode_limit` as "larger than the inspection limit", and quotes it:
    // 8 MiB out of a few KB shows the bomb.
    expect(rpc.map((r) => [r.kind, r.direction, String(r.reason).split(":")[0]])).toEqual([["invalid", "server_to_client", "body_truncated"]]);
    const compressed = Number(/\(decoded body exceeds 8388608 bytes \(from (\d+) compressed bytes\); decoding stopped\)$/.exec(String(rpc[0]!.reason))?.[1]);
    expect(compressed).toBeGreaterThan(0);
    expect(compressed).toBeLessThan(64 * 1024);
    await expectStillServes();
  });

  it("a brotli bomb (1.25 GiB of zeros) as an event stream: forwarded as sent, decoding stopped once it expanded 1000:1 past 64 MiB", async () => {
    const path = "/br-bomb";
    const { result: res, growth, ms } = await measured(() => fetchRaw(agent, `${base}${path}`, { headers: mcpHeaders({ accept: "text/event-stream" }) }));
    expect(res.status).toBe(200);
    expect(res.headers["content-encoding"]).toBe("br");
    expect({ length: res.length, sha256: res.sha256 }).toEqual({ length: brBomb.length, sha256: sha256(brBomb) });
    expect(brBomb.length).toBeLessThan(2 * MiB);
    expect(growth).toBeLessThan(MAX_RSS_GROWTH);
    expect(ms).toBeLessThan(15_000);
    const reasonsOf = (rpc: LogRecord[]): string[] => rpc.filter((r) => r.kind === "invalid").map((r) => String(r.reason));
    const { rpc } = await recordsFor(path, (rpc) => reasonsOf(rpc).some((r) => r.startsWith("decode_limit")));
    const reasons = reasonsOf(rpc);
    expect(reasons.some((r) => r.startsWith(`event_too_large: SSE event at byte 0 exceeds ${INSPECT} bytes`))).toBe(true);
    expect(reasons.some((r) => r.startsWith("decode_limit: decoded body is over 1000 times its compressed size past 67108864 bytes"))).toBe(true);
    await expectStillServes();
  }, 60_000);
});
