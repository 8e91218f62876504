/**
 * The attacks of issue 33, each one peer on loopback against a proxy of its own: a hostile upstream (plain
 * HTTP, every route one attack's server side) and the client side of each attack. Sizes are the issue's;
 * `scale` shrinks the counts for a quick run. Every attack stops at its deadline and says how far it got.
 */
import http from "node:http";
import net from "node:net";
import { nowMs, sleep } from "./time.ts";

const MiB = 1024 * 1024;

/**
 * The hostile client's own address: the other client of the bench connects from 127.0.0.1, and a real hostile
 * client has an address of its own (the proxy shares its loop, and its inspection budget, by client address).
 */
export const HOSTILE_CLIENT_ADDRESS = "127.0.0.2";

export interface AttackTarget {
  proxyPort: number;
  /** The hostile upstream, `127.0.0.1:PORT`. */
  upstream: string;
  /** The UI's feed URL with its token (row 8 only). */
  uiFeed?: string;
  deadline: number;
  scale: number;
}

export interface Attack {
  row: number;
  name: string;
  /** What one hostile peer may add to the proxy's memory (MiB). */
  targetMiB: number;
  /** Extra options of the proxy under attack. */
  proxyArgs?: "enforce" | "ui";
  /** Returns how far it got, e.g. "40/40 streams". */
  run(t: AttackTarget): Promise<string>;
}

const MCP = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };

/** The hostile server: each path one behaviour. */
export function startHostileUpstream(): Promise<{ port: number; close(): void }> {
  const sockets = new Set<net.Socket>();
  const big = Buffer.alloc(8 * MiB - 1024, 0x61);
  let serial = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      switch (url.pathname) {
        case "/unterminated":
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\ndata: `);
          return void res.write(big);
        case "/one-byte": {
          const bytes = Number(url.searchParams.get("bytes"));
          const sse = url.searchParams.get("sse") === "1";
          const text = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "y".repeat(bytes) }] } });
          const body = Buffer.from(sse ? `data: ${text}\n\n` : text);
          res.writeHead(200, { "content-type": sse ? "text/event-stream" : "application/json" });
          return void writeBytes(res, body);
        }
        case "/drop":
          // Read, never answered: the connection goes (the request is given up).
          return void req.socket.destroy();
        case "/legacy": {
          const count = Number(url.searchParams.get("count"));
          res.writeHead(200, { "content-type": "text/event-stream" });
          const pad = "e".repeat(512 * 1024);
          return void writeEvents(res, count, (i) => `event: endpoint\ndata: /messages?session=${i}-${pad}\n\n`).then(() => res.end());
        }
        case "/tools": {
          const id = (JSON.parse(Buffer.concat(chunks).toString() || "{}") as { id?: number }).id ?? 1;
          const n = ++serial;
          const schema = { type: "object", properties: { blob: { type: "string", description: "s".repeat(80 * 1024) } } };
          const tools = Array.from({ length: 100 }, (_, i) => ({ name: `tool_${n}_${i}`, description: "d", inputSchema: schema }));
          res.writeHead(200, { "content-type": "application/json" });
          return void res.end(JSON.stringify({ jsonrpc: "2.0", id, result: { tools } }));
        }
        default:
          res.writeHead(200, { "content-type": "application/json" });
          return void res.end(`{"jsonrpc":"2.0","id":1,"result":{}}`);
      }
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
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

/** Writes `body` as chunked encoding, one byte a chunk (node writes each `write` as one chunk when corked off). */
function writeBytes(res: http.ServerResponse, body: Buffer): void {
  const wire = oneByteChunks(body);
  // Raw on the socket: the head went out with writeHead's first flush.
  res.flushHeaders();
  res.socket?.end(wire);
}

/** `body` as a chunked-encoding wire of 1-byte chunks (`1\r\nX\r\n` each), then the last chunk. */
function oneByteChunks(body: Buffer): Buffer {
  const wire = Buffer.alloc(body.length * 6 + 5);
  for (let i = 0; i < body.length; i++) {
    const at = i * 6;
    wire[at] = 0x31;
    wire[at + 1] = 0x0d;
    wire[at + 2] = 0x0a;
    wire[at + 3] = body[i]!;
    wire[at + 4] = 0x0d;
    wire[at + 5] = 0x0a;
  }
  wire.write("0\r\n\r\n", body.length * 6, "latin1");
  return wire;
}

async function writeEvents(res: http.ServerResponse, count: number, event: (i: number) => string): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (!res.write(event(i))) await new Promise((r) => res.once("drain", r));
  }
}

/** A request through the proxy (absolute URI); resolves with the status once the answer is read, 0 on error. */
function through(t: AttackTarget, path: string, init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request({ host: "127.0.0.1", localAddress: HOSTILE_CLIENT_ADDRESS, port: t.proxyPort, method: init.method ?? "GET", path: `http://${t.upstream}${path}`, headers: init.headers ?? {}, agent: false });
    // Stopped at the deadline (status 0).
    const timer = setTimeout(() => req.destroy(), Math.max(0, t.deadline - nowMs()));
    const done = (status: number): void => {
      clearTimeout(timer);
      resolve(status);
    };
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => done(res.statusCode ?? 0));
      res.on("error", () => done(0));
    });
    req.on("error", () => done(0));
    req.end(init.body);
  });
}

/** Runs `count` tasks, `concurrency` at a time, until the deadline; returns how many ran. */
async function pool(count: number, concurrency: number, deadline: number, task: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count && nowMs() < deadline) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return next;
}

/** The body of a raw request in 1-byte chunks, sent to the proxy on a socket of its own; resolves at the answer (true) or the deadline. */
function oneBytePost(t: AttackTarget, body: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    const wire = oneByteChunks(body);
    const head = `POST http://${t.upstream}/answer HTTP/1.1\r\nhost: ${t.upstream}\r\n${Object.entries(MCP).map(([k, v]) => `${k}: ${v}\r\n`).join("")}transfer-encoding: chunked\r\nconnection: close\r\n\r\n`;
    const socket = net.connect({ port: t.proxyPort, host: "127.0.0.1", localAddress: HOSTILE_CLIENT_ADDRESS }, () => socket.write(Buffer.concat([Buffer.from(head), wire])));
    // Stopped at the deadline: the attack says how far it got.
    const timer = setTimeout(() => socket.destroy(), Math.max(0, t.deadline - nowMs()));
    socket.on("data", () => undefined);
    socket.on("error", () => resolve(false));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(answered);
    });
    let answered = false;
    socket.once("data", () => (answered = true));
  });
}

const rpc = (id: number, method: string, params: unknown): Buffer => Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, method, params }));

export const ATTACKS: Attack[] = [
  {
    row: 1,
    name: "40 SSE streams, each an unterminated 8 MiB data: line",
    targetMiB: 256,
    async run(t) {
      const count = Math.max(4, Math.round(40 * t.scale));
      const line = 8 * MiB - 1024;
      const requests: http.ClientRequest[] = [];
      let full = 0;
      await Promise.all(
        Array.from({ length: count }, () =>
          new Promise<void>((resolve) => {
            const req = http.request({ host: "127.0.0.1", localAddress: HOSTILE_CLIENT_ADDRESS, port: t.proxyPort, path: `http://${t.upstream}/unterminated`, headers: { accept: "text/event-stream", "mcp-protocol-version": "2025-11-25" }, agent: false });
            requests.push(req);
            const timer = setTimeout(resolve, Math.max(0, t.deadline - nowMs()));
            req.on("response", (res) => {
              let n = 0;
              res.on("data", (c: Buffer) => {
                n += c.length;
                if (n >= line) {
                  full++;
                  clearTimeout(timer);
                  resolve();
                }
              });
            });
            req.on("error", () => resolve());
            req.end();
          }),
        ),
      );
      await sleep(500);
      for (const r of requests) r.destroy();
      return `${full}/${count} streams read whole`;
    },
  },
  {
    row: 2,
    name: "3 held 1 MiB POSTs in 1-byte chunks (enforce mode)",
    targetMiB: 64,
    proxyArgs: "enforce",
    async run(t) {
      const body = rpc(1, "tools/call", { name: "echo", arguments: { text: "x".repeat(Math.round(MiB * Math.max(t.scale, 0.25))) } });
      const answered = (await Promise.all([0, 1, 2].map(() => oneBytePost(t, body)))).filter(Boolean).length;
      return `${answered}/3 × ${(body.length / MiB).toFixed(2)} MiB answered`;
    },
  },
  {
    row: 3,
    name: "a server answering 7 MB in 1-byte chunks (JSON, then SSE)",
    targetMiB: 64,
    async run(t) {
      const bytes = Math.round(3.5e6 * t.scale);
      const json = await through(t, `/one-byte?bytes=${bytes}`, { method: "POST", headers: MCP, body: rpc(1, "tools/call", { name: "x" }) });
      const sse = await through(t, `/one-byte?bytes=${bytes}&sse=1`, { method: "POST", headers: MCP, body: rpc(1, "tools/call", { name: "x" }) });
      return `2 × ${(bytes / 1e6).toFixed(1)} MB (HTTP ${json}, ${sse})`;
    },
  },
  {
    row: 4,
    name: "1,000 initialize requests with 1 MiB params, never answered",
    targetMiB: 64,
    async run(t) {
      const count = Math.round(1000 * t.scale);
      const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "x", version: "1" }, pad: "p".repeat(MiB) };
      const done = await pool(count, 16, t.deadline, (i) => through(t, "/drop", { method: "POST", headers: MCP, body: rpc(i, "initialize", params) }));
      return `${done}/${count} requests`;
    },
  },
  {
    row: 5,
    name: "one legacy stream announcing 2,000 endpoints of 512 KiB, then ending",
    targetMiB: 64,
    async run(t) {
      const count = Math.round(2000 * t.scale);
      const status = await through(t, `/legacy?count=${count}`, { headers: { accept: "text/event-stream" } });
      return `${count} endpoints (HTTP ${status})`;
    },
  },
  {
    row: 6,
    name: "200 tools/list answers of 100 new tools with 80 KB schemas",
    targetMiB: 64,
    async run(t) {
      const count = Math.round(200 * t.scale);
      const done = await pool(count, 4, t.deadline, (i) => through(t, "/tools", { method: "POST", headers: MCP, body: rpc(i, "tools/list", {}) }));
      return `${done}/${count} answers`;
    },
  },
  {
    row: 7,
    name: "15,000 requests with a new 15 KB Mcp-Session-Id each",
    targetMiB: 64,
    async run(t) {
      const count = Math.round(15_000 * t.scale);
      const pad = "s".repeat(15 * 1024);
      const done = await pool(count, 32, t.deadline, (i) => through(t, "/answer", { method: "POST", headers: { ...MCP, "mcp-session-id": `${i}-${pad}` }, body: rpc(i, "tools/call", { name: "x" }) }));
      return `${done}/${count} requests`;
    },
  },
  {
    row: 8,
    name: "300 live-UI feed subscribers that never read",
    targetMiB: 64,
    proxyArgs: "ui",
    async run(t) {
      if (!t.uiFeed) return "no UI";
      const feed = new URL(t.uiFeed);
      const sockets = Array.from({ length: 300 }, () => {
        const s = net.connect({ port: Number(feed.port), host: feed.hostname, localAddress: HOSTILE_CLIENT_ADDRESS }, () => {
          s.write(`GET ${feed.pathname}${feed.search} HTTP/1.1\r\nhost: ${feed.host}\r\n\r\n`);
          s.pause(); // never read
        });
        s.on("error", () => undefined);
        return s;
      });
      await sleep(Math.max(0, t.deadline - nowMs()));
      for (const s of sockets) s.destroy();
      return "300 subscribers";
    },
  },
];
