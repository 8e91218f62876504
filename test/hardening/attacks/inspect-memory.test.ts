/**
 * One hostile peer drove the proxy's memory up without limit (issue 33, rows 1–3): every unterminated SSE
 * `data:` line was kept twice per stream (the decoder's raw copy and the parser's text) with no budget over
 * all of them, and a body that came in 1-byte chunks was kept as one Buffer (and one string) per chunk.
 * Through the BUILT CLI as a child process (its memory read from /proc), over plain HTTP on loopback:
 * - 20 event streams, each an unterminated `data:` line just under --max-inspect-bytes (8 MiB, the default);
 * - a held 512 KiB POST (enforce mode) in 1-byte chunks;
 * - a server answering 512 KiB of JSON in 1-byte chunks.
 * Each must leave the proxy's memory growth well under what the old code took (hundreds of MB), keep the bytes
 * exactly as sent, and the proxy still serving. Needs `npm run build` first (npm test does it).
 */
import { writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MiB, rssOf, sampleRss, sha256, startCliProxy, type CliProxy } from "../input/input-kit.js";

/** What one hostile peer may add, loosely (the bench holds the tight target): the old code took 350–500 MB here. */
const MAX_GROWTH = 120 * MiB;
const STREAMS = 20;
const LINE = 8 * MiB - 1024;
const FIRST_EVENT = `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}\n\n`;
const LINE_BYTES = Buffer.alloc(LINE, 0x61);

/** A raw upstream: `answer` writes the response to each request head it reads (and gets the body read so far). */
function rawUpstream(answer: (socket: net.Socket, head: string, body: () => Buffer) => void): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    const message = new MessageReader();
    let answered = false;
    socket.on("data", (chunk: Buffer) => {
      if (answered || !message.add(chunk)) return;
      const all = message.all();
      const end = all.indexOf("\r\n\r\n");
      const head = all.subarray(0, end).toString("latin1");
      answered = true;
      answer(socket, head, () => bodyOf(head, all.subarray(end + 4)));
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      }),
    ),
  );
}

/** Sends `raw` (a whole request, head and body as on the wire) to the proxy; resolves with the status and body read. */
function rawRequest(proxy: CliProxy, raw: Buffer): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.port, proxy.host, () => socket.write(raw));
    const message = new MessageReader();
    const done = (): void => {
      const all = message.all();
      const end = all.indexOf("\r\n\r\n");
      const head = all.subarray(0, Math.max(end, 0)).toString("latin1");
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), body: end < 0 ? Buffer.alloc(0) : bodyOf(head, all.subarray(end + 4)) });
    };
    socket.on("data", (c: Buffer) => message.add(c) && done());
    socket.on("error", reject);
    socket.on("close", done);
  });
}

const LAST_CHUNK = Buffer.from("\r\n0\r\n\r\n");

/** One HTTP message read as it comes (its pieces kept, joined once): `add` says when it has all arrived. */
class MessageReader {
  private readonly pieces: Buffer[] = [];
  private head: string | null = null;
  private bytes = 0;
  private tail = Buffer.alloc(0);

  add(chunk: Buffer): boolean {
    this.pieces.push(chunk);
    this.bytes += chunk.length;
    this.tail = Buffer.concat([this.tail, chunk.subarray(-7)]).subarray(-7);
    if (this.head === null) {
      const all = this.all();
      const end = all.indexOf("\r\n\r\n");
      if (end < 0) return false;
      this.head = all.subarray(0, end + 4).toString("latin1");
    }
    // The last chunk (no trailers here): a body byte is always followed by CRLF and a size, never by CRLF CRLF.
    if (/transfer-encoding:\s*chunked/i.test(this.head)) return this.tail.equals(LAST_CHUNK);
    return this.bytes - this.head.length >= Number(/content-length:\s*(\d+)/i.exec(this.head)?.[1] ?? 0);
  }

  all(): Buffer {
    const all = Buffer.concat(this.pieces);
    this.pieces.length = 0;
    this.pieces.push(all);
    return all;
  }
}

/** The body of a message as sent: unchunked when chunked. */
function bodyOf(head: string, raw: Buffer): Buffer {
  return /transfer-encoding:\s*chunked/i.test(head) ? unchunk(raw) : raw;
}

/** `body` as chunked encoding in 1-byte chunks (six bytes on the wire per byte of body). */
function oneByteChunks(body: Buffer): Buffer {
  const out = Buffer.alloc(body.length * 6 + 5);
  let at = 0;
  for (const byte of body) {
    out[at++] = 0x31; // "1"
    out[at++] = 0x0d;
    out[at++] = 0x0a;
    out[at++] = byte;
    out[at++] = 0x0d;
    out[at++] = 0x0a;
  }
  out.write("0\r\n\r\n", at, "latin1");
  return out;
}

/** The body of a chunked message, unchunked. */
function unchunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf("\r\n", at);
    const size = parseInt(raw.subarray(at, eol).toString("latin1"), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

const rpc = (pad: number): Buffer =>
  Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(pad) } } }));

const MCP_HEAD = "content-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n";

async function settle(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function stillServes(proxy: CliProxy): Promise<void> {
  const res = await fetch(`${proxy.url}/healthz`);
  expect(res.status).toBe(200);
}

describe("one hostile peer's memory cost is bounded (issue 33)", () => {
  let dir: string;
  let enforcePolicy: string;
  beforeAll(async () => {
    dir = await import("node:fs/promises").then((fs) => fs.mkdtemp(path.join(os.tmpdir(), "wiretap-budget-")));
    enforcePolicy = path.join(dir, "enforce.yaml");
    await writeFile(enforcePolicy, "mode: enforce\n");
  });
  afterAll(async () => {
    await import("node:fs/promises").then((fs) => fs.rm(dir, { recursive: true, force: true }));
  });
  let proxy: CliProxy | undefined;
  let up: { close(): void } | undefined;
  afterEach(async () => {
    up?.close();
    await proxy?.dispose();
    proxy = undefined;
    up = undefined;
  });

  it("20 unterminated SSE data lines just under --max-inspect-bytes: bounded growth, bytes passed on, the rest recorded as not inspected", async () => {
    const upstream = await rawUpstream((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n${FIRST_EVENT}data: `);
      socket.write(LINE_BYTES);
    });
    up = upstream;
    proxy = await startCliProxy([]);
    const p = proxy;
    const before = rssOf(p.pid);
    const peak = sampleRss(p.pid);
    const requests: http.ClientRequest[] = [];
    const received = await Promise.all(
      Array.from({ length: STREAMS }, (_, i) => {
        const req = http.request({ host: p.host, port: p.port, path: `http://127.0.0.1:${upstream.port}/sse/${i}`, headers: { accept: "text/event-stream", "mcp-protocol-version": "2025-11-25" } });
        requests.push(req);
        req.end();
        return new Promise<number>((resolve, reject) => {
          req.on("error", reject);
          req.on("response", (res) => {
            let n = 0;
            res.on("data", (c: Buffer) => {
              n += c.length;
              if (n >= FIRST_EVENT.length + 6 + LINE) resolve(n);
            });
          });
        });
      }),
    );
    await settle(500);
    const growth = peak.stop() - before;
    for (const n of received) expect(n).toBe(FIRST_EVENT.length + 6 + LINE);
    // The budget the proxy shows (it still serves): this one server holds no more than its share, and the rest was refused.
    const health = (await (await fetch(`${p.url}/healthz`)).json()) as { status: string; inspectMemory: { used: number; limit: number; largestPeer: number; peerShare: number; refused: number }; memory: { rss: number; heapUsed: number } };
    expect(health).toMatchObject({ status: "ok" });
    // The process's own memory beside the budget: an operator weighs one against the other.
    expect(health.memory.rss).toBeGreaterThan(health.memory.heapUsed);
    expect(health.memory.heapUsed).toBeGreaterThan(0);
    expect(health.inspectMemory.largestPeer).toBeLessThanOrEqual(health.inspectMemory.peerShare);
    expect(health.inspectMemory.refused).toBeGreaterThan(0);
    for (const r of requests) r.destroy();
    expect(growth).toBeLessThan(MAX_GROWTH);
    // The streams past the peer's share are recorded as not inspected.
    await p.waitForRecord((r) => r.event === "rpc" && /inspection memory/.test(JSON.stringify(r)), "a record of an event not inspected");
  }, 120_000);

  it("a held 512 KiB POST in 1-byte chunks (enforce mode): judged, forwarded exactly, bounded growth", async () => {
    const body = rpc(MiB / 2);
    const seen: Buffer[] = [];
    up = await rawUpstream((socket, _head, got) => {
      seen.push(got());
      const answer = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`;
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${answer.length}\r\n\r\n${answer}`);
    });
    const port = (up as unknown as { port: number }).port;
    proxy = await startCliProxy(["--config", enforcePolicy]);
    const before = rssOf(proxy.pid);
    const peak = sampleRss(proxy.pid);
    const wire = Buffer.concat([Buffer.from(`POST http://127.0.0.1:${port}/mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${MCP_HEAD}transfer-encoding: chunked\r\nconnection: close\r\n\r\n`), oneByteChunks(body)]);
    const answer = await rawRequest(proxy, wire);
    const growth = peak.stop() - before;
    expect(answer.status).toBe(200);
    expect(seen.map(sha256)).toEqual([sha256(body)]);
    await stillServes(proxy);
    expect(growth).toBeLessThan(MAX_GROWTH);
  }, 120_000);

  it("a server answering 512 KiB of JSON in 1-byte chunks: passed on exactly, inspected, bounded growth", async () => {
    const answer = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "y".repeat(MiB / 2) }] } }));
    const chunked = oneByteChunks(answer);
    up = await rawUpstream((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n");
      socket.end(chunked);
    });
    const port = (up as unknown as { port: number }).port;
    proxy = await startCliProxy([]);
    const before = rssOf(proxy.pid);
    const peak = sampleRss(proxy.pid);
    const request = rpc(10);
    const got = await rawRequest(proxy, Buffer.concat([Buffer.from(`POST http://127.0.0.1:${port}/mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${MCP_HEAD}content-length: ${request.length}\r\nconnection: close\r\n\r\n`), request]));
    expect(got.status).toBe(200);
    expect(sha256(got.body)).toBe(sha256(answer));
    await proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "server_to_client" && r.id === 1, "the answer's record", 20_000);
    const growth = peak.stop() - before;
    await stillServes(proxy);
    expect(growth).toBeLessThan(MAX_GROWTH);
  }, 120_000);

  describe("what a user sees when the budget is spent (--max-inspect-memory 16k: 2 KiB a peer)", () => {
    const body = rpc(8 * 1024);
    const post = (port: number): Buffer => Buffer.concat([Buffer.from(`POST http://127.0.0.1:${port}/mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${MCP_HEAD}content-length: ${body.length}\r\nconnection: close\r\n\r\n`), body]);
    const answerOk = (socket: net.Socket): void => {
      const answer = `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`;
      socket.end(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${answer.length}\r\n\r\n${answer}`);
    };

    it("monitor mode forwards the request whole and records that it was not inspected", async () => {
      const seen: Buffer[] = [];
      up = await rawUpstream((socket, _head, got) => {
        seen.push(got());
        answerOk(socket);
      });
      proxy = await startCliProxy(["--max-inspect-memory", "16k"]);
      const answer = await rawRequest(proxy, post((up as unknown as { port: number }).port));
      expect(answer.status).toBe(200);
      expect(seen.map(sha256)).toEqual([sha256(body)]);
      const record = await proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "client_to_server", "the request's record");
      expect(record).toMatchObject({ kind: "invalid" });
      expect(String(record.reason)).toMatch(/^over_budget: JSON body of \d+ bytes not inspected: the inspection memory budget \(--max-inspect-memory\)/);
    }, 60_000);

    it("enforce mode refuses the held request (503), and nothing reaches the server", async () => {
      const seen: Buffer[] = [];
      up = await rawUpstream((socket, _head, got) => {
        seen.push(got());
        answerOk(socket);
      });
      proxy = await startCliProxy(["--max-inspect-memory", "16k", "--config", enforcePolicy]);
      const answer = await rawRequest(proxy, post((up as unknown as { port: number }).port));
      expect(answer.status).toBe(503);
      expect(answer.body.toString()).toMatch(/request not judged, not forwarded: the inspection memory budget \(--max-inspect-memory\) or this peer's share of it is spent; retry later/);
      expect(seen).toEqual([]);
    }, 60_000);
  });

  it("a server that resets mid-answer (enforce mode) leaves nothing charged: the budget is whole again", async () => {
    up = await rawUpstream((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200000\r\n\r\n{"jsonrpc":"2.0","id":1,"result":{"pad":"${"p".repeat(100_000)}`);
      setTimeout(() => socket.destroy(), 200);
    });
    proxy = await startCliProxy(["--config", enforcePolicy]);
    const port = (up as unknown as { port: number }).port;
    const request = rpc(10);
    const wire = Buffer.concat([Buffer.from(`POST http://127.0.0.1:${port}/mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${MCP_HEAD}content-length: ${request.length}\r\nconnection: close\r\n\r\n`), request]);
    await Promise.all([rawRequest(proxy, wire), rawRequest(proxy, wire), rawRequest(proxy, wire)]);
    const used = async (): Promise<number> => ((await (await fetch(`${proxy!.url}/healthz`)).json()) as { inspectMemory: { used: number } }).inspectMemory.used;
    const deadline = Date.now() + 5000;
    while ((await used()) > 0 && Date.now() < deadline) await settle(100);
    expect(await used()).toBe(0);
  }, 60_000);
});
