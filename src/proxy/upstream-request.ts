import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { ForwardRoute, Upstream } from "./forward.js";

export interface UpstreamRequestSpec {
  upstream: Upstream;
  route: ForwardRoute;
  /** The client's request (its method; whether it is complete, for a retry). */
  req: http.IncomingMessage;
  /** The request head upstream, as raw name/value pairs, before `replaced` headers. */
  headers: string[];
  /** Headers sent instead of the client's (enforcement). */
  replaced: ReadonlyMap<string, string>;
  /** Body bytes forwarded so far: a request that sent any is never sent twice. */
  bodyBytes(): number;
  /** Whether a failed attempt may still be sent once more (no response yet, client still there). */
  mayRetry(): boolean;
  /** Each attempt, before it goes out: where its response handlers are attached. */
  attach(request: http.ClientRequest): void;
  /** The request failed for good (not called for an attempt that is retried). */
  failed(err: NodeJS.ErrnoException, request: http.ClientRequest): void;
}

/**
 * Opens the proxy→server request: the connect (and TLS handshake) timeout, and one retry on a fresh
 * connection when a pooled one turns out to be closed by the server (its idle timeout) just as this
 * request went out on it — only for an idempotent request without a body, as clients do directly.
 */
export function openUpstreamRequest(spec: UpstreamRequestSpec): http.ClientRequest {
  const { upstream, route } = spec;
  let retried = false;
  const open = (): http.ClientRequest => {
    const request = (route.secure ? https : http).request({
      host: route.target.host,
      port: route.target.port,
      method: spec.req.method,
      path: route.path,
      headers: withReplacements(spec.headers, spec.replaced) as unknown as http.OutgoingHttpHeaders,
      setHost: false,
      agent: route.secure ? upstream.httpsAgent : upstream.httpAgent,
      servername: isIP(route.target.host) ? undefined : route.target.host,
    });
    watchConnectTimeout(request, upstream.connectTimeoutMs, route.secure);
    spec.attach(request);
    request.on("error", (err: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && STALE_CONNECTION_CODES.has(err.code ?? "");
      if (!retried && stale && spec.mayRetry() && replayable(spec.req, spec.headers, spec.bodyBytes())) {
        retried = true;
        open().end();
        return;
      }
      spec.failed(err, request);
    });
    return request;
  };
  return open();
}

function withReplacements(raw: string[], replaced: ReadonlyMap<string, string>): string[] {
  if (replaced.size === 0) return raw;
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!replaced.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  for (const [name, value] of replaced) out.push(name, value);
  return out;
}

const STALE_CONNECTION_CODES = new Set(["ECONNRESET", "EPIPE"]);
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** A request that can be sent again as it was: idempotent, complete, and without a body. */
function replayable(req: http.IncomingMessage, headers: string[], bodyBytes: number): boolean {
  if (!IDEMPOTENT_METHODS.has(req.method ?? "") || !req.complete || bodyBytes > 0) return false;
  for (let i = 0; i + 1 < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    if (name === "transfer-encoding" || (name === "content-length" && headers[i + 1]!.trim() !== "0")) return false;
  }
  return true;
}

/**
 * A new connection must be usable within `ms`: the TCP connect and, for TLS, the handshake (a server that
 * accepts and never answers the ClientHello would otherwise hold the exchange for good).
 */
function watchConnectTimeout(request: http.ClientRequest, ms: number, secure: boolean): void {
  request.once("socket", (socket) => {
    if (!socket.connecting) return;
    let connected = false;
    const timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error(connected ? "TLS handshake timeout" : "connect timeout");
      err.code = connected ? "UPSTREAM_TLS_TIMEOUT" : "UPSTREAM_CONNECT_TIMEOUT";
      request.destroy(err);
    }, ms);
    timer.unref();
    socket.once("connect", () => {
      connected = true;
      if (!secure) clearTimeout(timer);
    });
    if (secure) socket.once("secureConnect", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
  });
}
