import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import { Proxy } from "http-mitm-proxy";

/**
 * The interception engine: http-mitm-proxy, and the only module that imports it.
 *
 * The engine accepts proxy connections and turns every request — absolute-URI requests and the requests
 * inside CONNECT tunnels — into a context that its `onRequest` hook sees. The rest of its defaults do not
 * fit a security tool (see docs/architecture.md), so three things are ours:
 * - CONNECT: validated targets, TLS terminated in-process on the client's socket with one leaf key,
 *   instead of a local HTTPS server and a loopback hop per host with a new key each;
 * - the exchange itself: taken over in `onRequest`, because the engine's forwarding ignores backpressure and
 *   re-frames bodies as chunked once anything watches them;
 * - errors: reported to our logger instead of the console.
 *
 * The engine's documented entry point, `listen()`, cannot be used: it creates a CA of its own on disk (default
 * file modes, a pure-JS RSA key), an HTTP server without our head timeout, and a WebSocket server that takes
 * the `upgrade` event. So our server hands each request to the engine's request path, `_onHttpServerRequest`,
 * and `_onError` is overridden (the engine prints every error and answers 504 on a response we own). These two
 * private names are the whole private use; test/proxy/engine.test.ts pins them.
 */
export interface EngineHandlers {
  connect(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** `requestTarget` is the request line's target as the client sent it (the engine rewrites `req.url`). */
  request(req: http.IncomingMessage, res: http.ServerResponse, requestTarget: string): void;
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** A request the HTTP parser rejected (answered 400 here): `rawPacket` holds the bytes it choked on. */
  malformed(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void;
  error(kind: string, err: Error): void;
}

class QuietProxy extends Proxy {
  constructor(private readonly report: (kind: string, err: Error) => void) {
    super();
  }

  override _onError(kind: string, _ctx: unknown, err: Error): void {
    this.report(kind, err);
  }
}

const HEADERS_TIMEOUT_MS = 60_000;

/**
 * The engine's own test (its static `parseHostAndPort`: an absolute http:// target, or a Host header), asked on
 * a copy because it rewrites `url` in place. A Host header starting with `http://` the engine would read with
 * node's legacy `url.parse`, which throws on some values (`http://[::1`: an uncaught exception that ends the
 * process) and prints a deprecation warning: such requests go past the engine too.
 */
function engineCanPlace(req: http.IncomingMessage, target: string): boolean {
  if (/^http:\/\//.test(req.headers.host ?? "")) return false;
  try {
    return Proxy.parseHostAndPort({ url: target, headers: req.headers } as http.IncomingMessage) !== null;
  } catch {
    return false;
  }
}

export class Engine {
  readonly server: http.Server;
  private readonly proxy: QuietProxy;

  constructor(handlers: EngineHandlers, headersTimeoutMs = HEADERS_TIMEOUT_MS) {
    this.proxy = new QuietProxy(handlers.error);
    // Read by the engine's request path; the exchange never uses them (we forward ourselves).
    this.proxy.options = { keepAlive: true };
    this.proxy.keepAlive = true;
    this.proxy.httpAgent = new http.Agent({ keepAlive: true });
    this.proxy.httpsAgent = new https.Agent({ keepAlive: true });
    const requestTargets = new WeakMap<http.IncomingMessage, string>();
    this.proxy.onRequest((ctx) => {
      const req = ctx.clientToProxyRequest;
      handlers.request(req, ctx.proxyToClientResponse, requestTargets.get(req) ?? req.url ?? "/");
    });

    // A request body may stream for as long as it likes (requestTimeout 0), but its head must arrive within a
    // minute: a client trickling header bytes (slowloris) is cut off with 408 and a record.
    // A paused request keeps at most 16 KiB in Node's own buffer (Node 22's default of 64 KiB is 64 Ki objects
    // for a body in 1-byte chunks, ~25 MiB of heap): see coalesce.ts.
    this.server = http.createServer({
      highWaterMark: 16 * 1024,
      keepAlive: true,
      requestTimeout: 0,
      headersTimeout: headersTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, headersTimeoutMs / 2)),
    });
    // No idle timeout: an SSE response may stay open for hours.
    this.server.timeout = 0;
    this.server.on("request", (req, res) => {
      const target = req.url ?? "/";
      // The engine answers a request it cannot place (no Host, not an absolute http:// URI: HTTP/1.0) with a
      // 400 of its own before any hook runs, and throws on some Host values. Those go straight to us, to be
      // routed and recorded like any other.
      if (!engineCanPlace(req, target)) {
        handlers.request(req, res, target);
        return;
      }
      requestTargets.set(req, target);
      this.proxy._onHttpServerRequest(false, req, res);
    });
    this.server.on("connect", handlers.connect);
    this.server.on("upgrade", handlers.upgrade);
    this.server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
      if (err.code !== "ECONNRESET" && socket.writable) {
        handlers.malformed(err, socket);
        const status = err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? "408 Request Timeout" : "400 Bad Request";
        socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      } else {
        socket.destroy();
      }
    });
  }

  /** Serves the HTTP requests inside a CONNECT tunnel (decrypted or plain) on the engine. */
  serveTunnel(socket: Duplex): void {
    this.server.emit("connection", socket);
  }

  listen(host: string, port: number): Promise<{ host: string; port: number }> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error): void => reject(err);
      this.server.once("error", onError);
      this.server.listen({ host, port }, () => {
        this.server.off("error", onError);
        const address = this.server.address();
        if (address && typeof address === "object") resolve({ host: address.address, port: address.port });
        else reject(new Error("listener has no address"));
      });
    });
  }

  /** Stops accepting; idle keep-alive connections close, busy ones finish their exchange. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  closeAll(): void {
    this.server.closeAllConnections();
  }
}
