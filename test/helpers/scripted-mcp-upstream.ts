/**
 * A scripted HTTPS upstream (test PKI, loopback) for MCP wire-format tests: each route's handler writes
 * exactly the bytes a test chooses, so any revision of the MCP HTTP transports (and any server quirk) can
 * be replayed byte for byte. Request bodies are read in full before the handler runs and recorded.
 *
 *   const up = await startScriptedUpstream();
 *   up.route("POST", "/mcp", (req, res) => { res.writeHead(200, {...}); res.end(bytes) });
 *
 * Helpers: `sseHead(res)` writes an event-stream head and flushes it; `json(res, value)` answers JSON;
 * `rpcResult(id, result)` builds a JSON-RPC response.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { testPki } from "./test-pki.js";

export interface ScriptedRequest {
  method: string;
  /** Path with query, as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body as UTF-8 text, parsed as JSON when it is JSON (else undefined). */
  json: unknown;
}

export type ScriptedHandler = (req: ScriptedRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface ScriptedUpstream {
  /** `https://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** `127.0.0.1:PORT`, as records name the server. */
  server: string;
  caPem: string;
  /** Every request, in arrival order (once its body is complete). */
  requests: ScriptedRequest[];
  /**
   * Routes `METHOD path` (path without query; `*` matches any path) to a handler. A later route for the
   * same key replaces the earlier one. Unrouted requests get 404.
   */
  route(method: string, path: string, handler: ScriptedHandler): void;
  /** Responses still open (SSE streams held by handlers). */
  readonly openResponses: number;
  close(): Promise<void>;
}

export function sseHead(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...headers });
  res.flushHeaders();
}

export function json(res: ServerResponse, value: unknown, headers: Record<string, string> = {}, status = 200): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

export function accepted(res: ServerResponse): void {
  res.writeHead(202, { "content-length": "0" });
  res.end();
}

export function rpcResult(id: string | number, result: Record<string, unknown> = {}): Record<string, unknown> {
  return { jsonrpc: "2.0", id, result };
}

/** One SSE event as TypeScript servers frame it. */
export function sseEvent(data: unknown, opts: { id?: string; event?: string } = {}): string {
  const text = typeof data === "string" ? data : JSON.stringify(data);
  return `${opts.event ? `event: ${opts.event}\n` : ""}${opts.id ? `id: ${opts.id}\n` : ""}data: ${text}\n\n`;
}

export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const pki = testPki();
  const routes = new Map<string, ScriptedHandler>();
  const requests: ScriptedRequest[] = [];
  const sockets = new Set<Socket>();
  const open = new Set<ServerResponse>();

  const server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem, keepAlive: true }, (raw, res) => {
    open.add(res);
    res.once("close", () => open.delete(res));
    const chunks: Buffer[] = [];
    raw.on("data", (c: Buffer) => chunks.push(c));
    raw.on("error", () => undefined);
    raw.on("end", () => {
      const body = Buffer.concat(chunks);
      let parsed: unknown;
      try {
        parsed = body.length > 0 ? JSON.parse(body.toString("utf8")) : undefined;
      } catch {
        parsed = undefined;
      }
      const url = raw.url ?? "/";
      const req: ScriptedRequest = { method: raw.method ?? "GET", url, headers: raw.headers, body, json: parsed };
      requests.push(req);
      const pathname = new URL(url, "https://upstream.invalid").pathname;
      const handler = routes.get(`${req.method} ${pathname}`) ?? routes.get(`${req.method} *`);
      if (!handler) {
        res.writeHead(404, { "content-type": "text/plain" }).end(`no route for ${req.method} ${pathname}`);
        return;
      }
      Promise.resolve()
        .then(() => handler(req, res, raw))
        .catch(() => {
          if (!res.headersSent) res.writeHead(500).end();
          else res.destroy();
        });
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => undefined);
  server.on("clientError", (_err, socket: Socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    server: `127.0.0.1:${port}`,
    caPem: pki.caPem,
    requests,
    route(method, path, handler) {
      routes.set(`${method.toUpperCase()} ${path}`, handler);
    },
    get openResponses() {
      return open.size;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.close(() => setImmediate(resolve));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
