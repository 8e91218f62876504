/**
 * The loopback HTTPS MCP-like upstream every path talks to (runs in the bench process, so its clock is the
 * client's clock):
 *   POST /mcp             JSON-RPC: a `tools/call` result as application/json, or as text/event-stream when
 *                         the request accepts only text/event-stream (Streamable HTTP); when the call asks for
 *                         `arguments.progress` = K (with `_meta.progressToken`), an event stream of K
 *                         `notifications/progress` and then the result; 202 for notifications
 *   GET  /sse?count&interval[&pair]  `count` progress notifications, one every `interval` ms, each stamped
 *                         with the server's monotonic write time (`sentNs`), then the stream ends; two
 *                         requests with the same `pair` key get each event at the same moment
 *   GET  /hold            an SSE stream that sends one event and stays open until the client goes
 *   GET  /big?mb=N        N MiB streamed with backpressure (content-length set)
 *   GET  /health          "ok"
 * Listens on 127.0.0.1 and, for new-host handshakes, on further loopback addresses (127.0.0.2, …).
 */
import https from "node:https";
import type http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Upstream {
  /** host:port of the main listener (127.0.0.1). */
  main: { host: string; port: number };
  /** host:port of the extra listeners, one per "new host". */
  extra: { host: string; port: number }[];
  readonly openHolds: number;
  readonly openConnections: number;
  /** JSON-RPC messages written in answers to POST /mcp (results and progress notifications). */
  readonly messagesWritten: number;
  /** TLS connections accepted so far (all listeners). */
  readonly connectionsAccepted: number;
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 0x61);

function jsonRpcResult(id: unknown): string {
  return JSON.stringify({ jsonrpc: "2.0", id: id ?? null, result: { content: [{ type: "text", text: "ok" }], isError: false } });
}

/** `count` progress events, one every `interval` ms, to each stream, each stamped just before its own write. */
function streamProgress(streams: http.ServerResponse[], count: number, interval: number): void {
  let n = 0;
  const timer = setInterval(() => {
    n++;
    // Alternate who is written first, so neither stream is favoured.
    const order = n % 2 === 0 ? streams : [...streams].reverse();
    for (const res of order) {
      const data = JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: "bench", progress: n, total: count, sentNs: process.hrtime.bigint().toString() },
      });
      res.write(`event: message\nid: ${n}\ndata: ${data}\n\n`);
    }
    if (n >= count) {
      clearInterval(timer);
      for (const res of streams) res.end();
    }
  }, interval);
  for (const res of streams) res.on("close", () => clearInterval(timer));
}

function sseHead(res: http.ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.flushHeaders();
}

export async function startUpstream(opts: { cert: string; key: string; extraHosts: readonly string[] }): Promise<Upstream> {
  /** `/sse?pair=KEY` requests waiting for their partner. */
  const pairs = new Map<string, http.ServerResponse>();
  let openHolds = 0;
  let connectionsAccepted = 0;
  let messagesWritten = 0;
  const sockets = new Set<Socket>();

  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const url = new URL(req.url ?? "/", "https://upstream");
    if (req.method === "POST" && url.pathname === "/mcp") {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        let message: { id?: unknown; method?: unknown; params?: { arguments?: { progress?: unknown }; _meta?: { progressToken?: unknown } } } = {};
        try {
          message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof message;
        } catch {
          res.writeHead(400, { "content-type": "application/json" }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
          return;
        }
        if (!("id" in message)) {
          res.writeHead(202).end();
          return;
        }
        const accept = String(req.headers.accept ?? "");
        const body = jsonRpcResult(message.id);
        const progress = Math.min(1000, Math.max(0, Number(message.params?.arguments?.progress ?? 0) || 0));
        const token = message.params?._meta?.progressToken;
        if (progress > 0 && token !== undefined && accept.includes("text/event-stream")) {
          sseHead(res);
          let events = "";
          for (let k = 1; k <= progress; k++) {
            const note = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: k, total: progress } };
            events += `event: message\ndata: ${JSON.stringify(note)}\n\n`;
          }
          messagesWritten += progress + 1;
          res.end(`${events}event: message\ndata: ${body}\n\n`);
        } else if (accept.includes("text/event-stream") && !accept.includes("application/json")) {
          messagesWritten++;
          sseHead(res);
          res.end(`event: message\ndata: ${body}\n\n`);
        } else {
          messagesWritten++;
          res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body);
        }
      });
      return;
    }
    if (req.method !== "GET") {
      res.writeHead(405).end();
      return;
    }
    switch (url.pathname) {
      case "/health":
        res.writeHead(200, { "content-type": "text/plain", "content-length": 2 }).end("ok");
        return;
      case "/sse": {
        const count = Math.min(10_000, Number(url.searchParams.get("count") ?? 10));
        const interval = Math.max(1, Number(url.searchParams.get("interval") ?? 10));
        sseHead(res);
        const pair = url.searchParams.get("pair");
        if (pair === null) {
          streamProgress([res], count, interval);
          return;
        }
        // Two requests with the same `pair` get the same events at the same moment (one direct, one through
        // a proxy): the client compares the two arrival times of each event.
        const waiting = pairs.get(pair);
        if (!waiting) {
          pairs.set(pair, res);
          res.on("close", () => pairs.get(pair) === res && pairs.delete(pair));
          return;
        }
        pairs.delete(pair);
        streamProgress([waiting, res], count, interval);
        return;
      }
      case "/hold":
        openHolds++;
        res.on("close", () => openHolds--);
        sseHead(res);
        res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "open" } })}\n\n`);
        return;
      case "/big": {
        const total = Math.min(1024, Number(url.searchParams.get("mb") ?? 1)) * 1024 * 1024;
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": total });
        let sent = 0;
        const pump = (): void => {
          while (sent < total) {
            const n = Math.min(CHUNK.length, total - sent);
            sent += n;
            if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) {
              res.once("drain", pump);
              return;
            }
          }
          res.end();
        };
        pump();
        return;
      }
      default:
        res.writeHead(404).end();
    }
  };

  const servers: https.Server[] = [];
  const listen = async (host: string): Promise<{ host: string; port: number }> => {
    const server = https.createServer({ cert: opts.cert, key: opts.key, keepAlive: true, requestTimeout: 0 }, handler);
    server.keepAliveTimeout = 120_000;
    server.on("connection", (s: Socket) => {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
    });
    server.on("secureConnection", () => connectionsAccepted++);
    server.on("tlsClientError", () => undefined);
    server.on("clientError", (_e, s: Socket) => s.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host, port: 0, backlog: 2048 }, () => resolve());
    });
    servers.push(server);
    return { host, port: (server.address() as AddressInfo).port };
  };

  const main = await listen("127.0.0.1");
  const extra: { host: string; port: number }[] = [];
  for (const host of opts.extraHosts) extra.push(await listen(host));
  return {
    main,
    extra,
    get openHolds() {
      return openHolds;
    },
    get openConnections() {
      return sockets.size;
    },
    get messagesWritten() {
      return messagesWritten;
    },
    get connectionsAccepted() {
      return connectionsAccepted;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
