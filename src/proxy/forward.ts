import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { TLSSocket } from "node:tls";
import type { AddonChain } from "./addon-chain.js";
import type { ExchangeMode, Peer } from "./exchange.js";
import { ExchangeRecord } from "./exchange-record.js";
import { endToEndRawHeaders } from "./headers.js";
import { formatTarget, type Target } from "./target.js";
import { classifyUpstreamError } from "./upstream-error.js";

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
}

/**
 * Forwards one exchange: the request head and body to the real server, the response back to the client,
 * byte for byte and with backpressure both ways, while taps get a copy of each body chunk.
 */
export function forwardExchange(
  addons: AddonChain,
  upstream: Upstream,
  route: ForwardRoute,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): ExchangeRecord {
  const server = formatTarget(route.target);
  const ex = new ExchangeRecord(
    route.mode,
    route.client,
    { host: route.target.host, port: route.target.port, secure: route.secure, tls: null, insecure: route.secure && upstream.insecure },
    { method: req.method ?? "GET", path: route.path, httpVersion: req.httpVersion, headers: req.headers },
  );
  addons.requestHeaders(ex);
  const requestTaps = addons.fanOut("request-tap", ex.requestTaps);
  let responseTaps = addons.fanOut("response-tap", []);
  let upstreamResponse: http.IncomingMessage | null = null;

  const upstreamRequest = (route.secure ? https : http).request({
    host: route.target.host,
    port: route.target.port,
    method: req.method,
    path: route.path,
    headers: endToEndRawHeaders(req.rawHeaders) as unknown as http.OutgoingHttpHeaders,
    setHost: false,
    agent: route.secure ? upstream.httpsAgent : upstream.httpAgent,
    servername: isIP(route.target.host) ? undefined : route.target.host,
  });
  watchConnectTimeout(upstreamRequest, upstream.connectTimeoutMs);

  req.on("data", (chunk: Buffer) => {
    ex.requestBytes += chunk.length;
    requestTaps.data(chunk);
  });
  req.on("end", () => requestTaps.end());
  req.pipe(upstreamRequest);

  upstreamRequest.on("response", (upRes) => {
    upstreamResponse = upRes;
    const socket = upRes.socket as TLSSocket | null;
    if (route.secure && socket && typeof socket.getProtocol === "function") {
      (ex.server as { tls: string | null }).tls = socket.getProtocol();
    }
    ex.response = {
      status: upRes.statusCode ?? 502,
      statusMessage: upRes.statusMessage ?? "",
      headers: upRes.headers,
      source: "upstream",
    };
    addons.responseHeaders(ex);
    responseTaps = addons.fanOut("response-tap", ex.responseTaps);
    res.writeHead(ex.response.status, ex.response.statusMessage, endToEndRawHeaders(upRes.rawHeaders));
    // Headers go out now, not with the first body chunk: an SSE stream may stay silent for a long time.
    res.flushHeaders();
    upRes.on("data", (chunk: Buffer) => {
      ex.responseBytes += chunk.length;
      responseTaps.data(chunk);
    });
    upRes.on("end", () => {
      if (upRes.rawTrailers.length > 0 && res.chunkedEncoding) res.addTrailers(pairs(upRes.rawTrailers));
      responseTaps.end();
    });
    upRes.on("error", (err: NodeJS.ErrnoException) => {
      ex.fail(classifyUpstreamError(err, server));
      res.destroy();
    });
    upRes.on("aborted", () => {
      ex.fail({ code: "upstream_reset", message: `${server}: response ended before it was complete` });
    });
    upRes.pipe(res);
  });

  upstreamRequest.on("error", (err: NodeJS.ErrnoException) => {
    if (ex.error?.code === "client_aborted") return;
    const failure = classifyUpstreamError(err, server);
    ex.fail(failure);
    if (!res.headersSent) {
      const body = `mcp-wiretap: ${failure.message}\n`;
      ex.response = { status: 502, statusMessage: "Bad Gateway", headers: {}, source: "proxy" };
      res.writeHead(502, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body) });
      res.end(body);
    } else {
      res.destroy();
    }
  });

  req.on("error", () => upstreamRequest.destroy());
  res.on("close", () => {
    if (!res.writableFinished) {
      ex.fail({ code: "client_aborted", message: "client closed the connection before the response was complete" });
      upstreamRequest.destroy();
      (upstreamResponse as http.IncomingMessage | null)?.destroy();
    }
    const reason = ex.error ?? { code: "incomplete", message: "body ended early" };
    if (ex.error) {
      requestTaps.abort(reason);
      responseTaps.abort(reason);
    } else {
      requestTaps.end();
      responseTaps.end();
    }
    ex.endedAt = Date.now();
    addons.exchangeEnd(ex);
  });
  return ex;
}

function watchConnectTimeout(request: http.ClientRequest, ms: number): void {
  request.once("socket", (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error("connect timeout");
      err.code = "UPSTREAM_CONNECT_TIMEOUT";
      request.destroy(err);
    }, ms);
    timer.unref();
    socket.once("connect", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
  });
}

function pairs(raw: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}
