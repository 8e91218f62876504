import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { AddonChain, TapFanOut } from "./addon-chain.js";
import type { ExchangeMode, Peer, RequestVerdict } from "./exchange.js";
import { ExchangeRecord } from "./exchange-record.js";
import { framingHeader, headersAsForwarded, type RequestFraming } from "./framing.js";
import { endToEndRawHeaders } from "./headers.js";
import { sendResponse } from "./response-writer.js";
import { formatTarget, type Target } from "./target.js";
import type { UpgradeLeg, UpgradeStats } from "./upgrade.js";
import { classifyUpstreamError } from "./upstream-error.js";
import { tapForwarded } from "./reclaim.js";

/** A held request whose judging failed is not forwarded: it was never judged. */
const UNJUDGED: RequestVerdict = {
  action: "respond",
  response: { status: 500, headers: { "content-type": "text/plain; charset=utf-8" }, body: Buffer.from("mcp-wiretap: the request could not be judged; not forwarded\n") },
};

export interface Upstream {
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  insecure: boolean;
  connectTimeoutMs: number;
}

export interface ForwardRoute {
  mode: ExchangeMode;
  target: Target;
  secure: boolean;
  client: Peer & { tls: string | null };
  /** Origin-form path to request upstream. */
  path: string;
  /** Reverse mode: the Host header the upstream expects instead of the client's. */
  hostHeader?: string;
}

export interface ForwardOptions {
  /** The request body's framing, as checked by `requestFraming`: the upstream gets the proxy's own for it. */
  framing: RequestFraming;
  /**
   * An Upgrade request: the client's socket, answered as an ordinary exchange unless the upstream switches.
   * Without `done`, the upgrade is not offered upstream (the request goes without its Upgrade header).
   */
  upgrade?: { leg: UpgradeLeg; done?(stats: UpgradeStats): void };
}

/**
 * Forwards one exchange: the request head and body to the real server, the response back to the client,
 * byte for byte and with backpressure both ways, while taps get a copy of each body chunk. The body goes
 * upstream with framing the proxy produces itself (never the client's framing headers, nor its `Expect`,
 * which node's server has already answered).
 */
export function forwardExchange(
  addons: AddonChain,
  upstream: Upstream,
  route: ForwardRoute,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  opts: ForwardOptions,
): ExchangeRecord {
  const server = formatTarget(route.target);
  const ex = new ExchangeRecord(
    route.mode,
    route.client,
    { host: route.target.host, port: route.target.port, secure: route.secure, tls: null, insecure: route.secure && upstream.insecure },
    { method: req.method ?? "GET", path: route.path, httpVersion: req.httpVersion, headers: headersAsForwarded(req.headers, req.rawHeaders) },
  );
  const upgrade = opts.upgrade;
  const switchDone = upgrade?.done;
  const endToEnd = endToEndRawHeaders(req.rawHeaders, switchDone ? KEEP_UPGRADE : undefined, FRAMED_BY_PROXY);
  /** The request head upstream: end-to-end headers, then the framing of the body that follows (`length`: exactly that many bytes). */
  const headersFor = (length?: number): string[] => [...endToEnd, ...framingHeader(opts.framing, length), ...(switchDone ? ["connection", "Upgrade"] : [])];
  if (route.hostHeader) ex.replaceRequestHeader("host", route.hostHeader);
  addons.requestHeaders(ex);
  const requestTaps = addons.fanOut("request-tap", ex.requestTaps);
  let responseTaps: TapFanOut = addons.fanOut("response-tap", []);
  let upstreamRequest: http.ClientRequest | null = null;
  let upstreamResponse: http.IncomingMessage | null = null;
  let retried = false;

  const openUpstream = (original: string[]): http.ClientRequest => {
    const rawHeaders = withReplacements(original, ex.replacedRequestHeaders);
    const request = (route.secure ? https : http).request({
      host: route.target.host,
      port: route.target.port,
      method: req.method,
      path: route.path,
      headers: rawHeaders as unknown as http.OutgoingHttpHeaders,
      setHost: false,
      agent: route.secure ? upstream.httpsAgent : upstream.httpAgent,
      servername: isIP(route.target.host) ? undefined : route.target.host,
    });
    watchConnectTimeout(request, upstream.connectTimeoutMs, route.secure);
    if (switchDone) request.on("upgrade", (upRes: http.IncomingMessage, socket: Duplex, head: Buffer) => switched(upRes, socket, head, switchDone));
    request.on("response", (upRes) => {
      upstreamResponse = upRes;
      upgrade?.leg.ordinary();
      const socket = upRes.socket as TLSSocket | null;
      if (route.secure && socket && typeof socket.getProtocol === "function") {
        (ex.server as { tls: string | null }).tls = socket.getProtocol();
      }
      ex.response = { status: upRes.statusCode ?? 502, statusMessage: upRes.statusMessage ?? "", headers: upRes.headers, source: "upstream" };
      addons.responseHeaders(ex);
      responseTaps = addons.fanOut("response-tap", ex.responseTaps);
      upRes.on("error", (err: NodeJS.ErrnoException) => {
        ex.fail(classifyUpstreamError(err, server));
        res.destroy();
      });
      upRes.on("aborted", () => ex.fail({ code: "upstream_reset", message: `${server}: response ended before it was complete` }));
      sendResponse(ex, upRes, res, responseTaps);
    });
    request.on("error", (err: NodeJS.ErrnoException) => {
      if (ex.error?.code === "client_aborted") return;
      // A pooled connection the server closed just as this request went out on it (its idle timeout): an
      // idempotent request without a body is sent once more on a fresh connection, as clients do directly.
      if (!retried && !upstreamResponse && !res.destroyed && request.reusedSocket && STALE_CONNECTION_CODES.has(err.code ?? "") && replayable(req, original, ex.requestBytes)) {
        retried = true;
        upstreamRequest = openUpstream(original);
        upstreamRequest.end();
        return;
      }
      const failure = classifyUpstreamError(err, server);
      ex.fail(failure);
      if (!res.headersSent) respondFromProxy(502, "Bad Gateway", `mcp-wiretap: ${failure.message}\n`);
      else res.destroy();
    });
    return request;
  };

  const respondFromProxy = (status: number, statusMessage: string, body: string | Buffer, headers?: Record<string, string>): void => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    const all = { "content-type": "text/plain; charset=utf-8", ...headers, "content-length": String(bytes.length) };
    ex.response = { status, statusMessage, headers: all, source: "proxy" };
    ex.responseBytes = bytes.length;
    res.writeHead(status, statusMessage, all);
    res.end(bytes);
  };

  /** `sent`: the chunk was already written upstream (piped), and is flushed before the taps' work. */
  const tapBody = (sent?: () => void): void => {
    tapForwarded(req, requestTaps, (n) => (ex.requestBytes += n), sent);
    req.on("end", () => requestTaps.end());
  };
  req.on("error", () => upstreamRequest?.destroy());

  /** The upstream answered 101: the exchange ends here on the record, and the connection becomes a raw pipe. */
  const switched = (upRes: http.IncomingMessage, socket: Duplex, head: Buffer, done: (stats: UpgradeStats) => void): void => {
    upstreamResponse = upRes;
    if (route.secure && typeof (socket as TLSSocket).getProtocol === "function") (ex.server as { tls: string | null }).tls = (socket as TLSSocket).getProtocol();
    ex.response = { status: upRes.statusCode ?? 101, statusMessage: upRes.statusMessage ?? "", headers: upRes.headers, source: "upstream" };
    addons.responseHeaders(ex);
    responseTaps = addons.fanOut("response-tap", ex.responseTaps);
    upgrade!.leg.switched(upRes, socket, head, done);
    end();
  };

  const hold = ex.requestHold;
  if (!hold) {
    upstreamRequest = openUpstream(headersFor());
    // Piped before it is tapped: each chunk is sent on before the taps look at it (see sendResponse).
    req.pipe(upstreamRequest);
    tapBody(() => upstreamRequest?.socket?.uncork());
  } else {
    tapBody();
    const chunks: Buffer[] = [];
    let size = 0;
    const apply = (verdict: RequestVerdict, rest: "piped" | "done"): void => {
      if (res.destroyed) return;
      if (verdict.action === "respond") {
        const r = verdict.response;
        respondFromProxy(r.status, statusText(r.status), r.body, r.headers);
        req.resume();
        return;
      }
      const whole = verdict.body ?? (rest === "done" ? Buffer.concat(chunks) : null);
      // A whole body goes with its exact length (none when there was no body at all).
      upstreamRequest = openUpstream(whole === null || (opts.framing.kind === "none" && whole.length === 0) ? headersFor() : headersFor(whole.length));
      if (whole) upstreamRequest.end(whole);
      else {
        for (const c of chunks) upstreamRequest.write(c);
        req.pipe(upstreamRequest);
        req.resume();
      }
    };
    const collect = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size <= hold.maxBytes) return;
      req.off("data", collect);
      req.off("end", onEnd);
      req.pause();
      void Promise.resolve(hold.decide(null, Buffer.concat(chunks, Math.min(size, 4096)))).then((v) => apply(v, "piped"), () => apply(UNJUDGED, "piped"));
    };
    const onEnd = (): void => {
      void Promise.resolve(hold.decide(Buffer.concat(chunks))).then((v) => apply(v, "done"), () => apply(UNJUDGED, "done"));
    };
    req.on("data", collect);
    req.on("end", onEnd);
    // The engine hands the request over paused.
    req.resume();
  }

  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    if (ex.error) {
      requestTaps.abort(ex.error);
      responseTaps.abort(ex.error);
    } else {
      requestTaps.end();
      responseTaps.end();
    }
    ex.endedAt = Date.now();
    addons.exchangeEnd(ex);
  };
  res.on("close", () => {
    if (!res.writableFinished) {
      ex.fail({
        code: "client_aborted",
        message: req.complete
          ? "client closed the connection before the response was complete"
          : "client closed the connection before the request body was complete",
      });
      upstreamRequest?.destroy();
      (upstreamResponse as http.IncomingMessage | null)?.destroy();
    }
    end();
  });
  return ex;
}

/** Framing is the proxy's own; `Expect: 100-continue` was answered by node's server already. */
const FRAMED_BY_PROXY = ["content-length", "expect"];
const KEEP_UPGRADE: ReadonlySet<string> = new Set(["upgrade"]);

function withReplacements(raw: string[], replaced: ReadonlyMap<string, string>): string[] {
  if (replaced.size === 0) return raw;
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!replaced.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  for (const [name, value] of replaced) out.push(name, value);
  return out;
}

function statusText(status: number): string {
  return http.STATUS_CODES[status] ?? "";
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
