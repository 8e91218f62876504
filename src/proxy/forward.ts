import http from "node:http";
import type https from "node:https";
import type { Duplex, Readable } from "node:stream";
import type { AddonChain } from "./addon-chain.js";
import { tapForwarded } from "./body-taps.js";
import { coalesced } from "./coalesce.js";
import type { ExchangeMode, Peer } from "./exchange.js";
import { ExchangeRecord } from "./exchange-record.js";
import { endWithResponse, type ExchangeLegs } from "./exchange-teardown.js";
import { framingHeader, headersAsForwarded, type RequestFraming } from "./framing.js";
import { endToEndRawHeaders } from "./headers.js";
import { formatTarget, type Target } from "./target.js";
import type { UpgradeLeg, UpgradeStats } from "./upgrade.js";
import { receiveResponse, receiveSwitch } from "./upstream-response.js";
import { holdRequest } from "./request-hold.js";
import { classifyUpstreamError } from "./upstream-error.js";
import { openUpstreamRequest } from "./upstream-request.js";
import type { ReadScheduler } from "./read-scheduler.js";
import { charged, scheduleReads } from "./scheduled-reads.js";
import { performance } from "node:perf_hooks";

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
  /** Shares the loop by peer: each body is read in its sender's turn (read-scheduler.ts). */
  scheduler?: ReadScheduler;
}

/**
 * Forwards one exchange: the request head and body to the real server, the response back to the client,
 * byte for byte and with backpressure both ways, while taps get a copy of each body chunk. The body goes
 * upstream with framing the proxy produces itself (never the client's framing headers, nor its `Expect`,
 * which node's server has already answered). The jobs around it are their own modules: the upstream request
 * (`upstream-request.ts`: open, retry, connect timeout), the enforce-mode hold (`request-hold.ts`) and the
 * end of the exchange (`exchange-teardown.ts`).
 */
export function forwardExchange(
  addons: AddonChain,
  upstream: Upstream,
  route: ForwardRoute,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  opts: ForwardOptions,
): ExchangeRecord {
  const startedAt = performance.now();
  const server = formatTarget(route.target);
  const ex = new ExchangeRecord(
    route.mode,
    route.client,
    { host: route.target.host, port: route.target.port, secure: route.secure, tls: null, insecure: route.secure && upstream.insecure },
    { method: req.method ?? "GET", path: route.path, httpVersion: req.httpVersion, headers: headersAsForwarded(req.headers, req.rawHeaders), rawHeaders: req.rawHeaders },
  );
  const upgrade = opts.upgrade;
  const switchDone = upgrade?.done;
  const endToEnd = endToEndRawHeaders(req.rawHeaders, switchDone ? KEEP_UPGRADE : undefined, FRAMED_BY_PROXY);
  /** The request head upstream: end-to-end headers, then the framing of the body that follows (`length`: exactly that many bytes). */
  const headersFor = (length?: number): string[] => [...endToEnd, ...framingHeader(opts.framing, length), ...(switchDone ? ["connection", "Upgrade"] : [])];
  if (route.hostHeader) ex.replaceRequestHeader("host", route.hostHeader);
  const unschedule = opts.scheduler ? scheduleReads(ex, opts.scheduler) : null;
  addons.requestHeaders(ex);
  const legs: ExchangeLegs = {
    ex,
    req,
    res,
    requestTaps: addons.fanOut("request-tap", ex.requestTaps),
    responseTaps: addons.fanOut("response-tap", []),
    upstreamRequest: null,
    upstreamResponse: null,
  };

  const openUpstream = (headers: string[]): http.ClientRequest =>
    openUpstreamRequest({
      upstream,
      route,
      req,
      headers,
      replaced: ex.replacedRequestHeaders,
      bodyBytes: () => ex.requestBytes,
      mayRetry: () => ex.error?.code !== "client_aborted" && !legs.upstreamResponse && !res.destroyed,
      attach: (request) => {
        legs.upstreamRequest = request;
        if (switchDone) {
          request.on("upgrade", (upRes: http.IncomingMessage, socket: Duplex, head: Buffer) =>
            receiveSwitch(legs, addons, route, { upRes, socket, head }, upgrade!.leg, switchDone, end),
          );
        }
        request.on("response", (upRes: http.IncomingMessage) => receiveResponse(legs, addons, route, upRes, upgrade?.leg));
      },
      failed: (err) => {
        if (ex.error?.code === "client_aborted") return;
        const failure = classifyUpstreamError(err, server);
        ex.fail(failure);
        if (!res.headersSent) respondFromProxy(ex, res, 502, "Bad Gateway", `mcp-wiretap: ${failure.message}\n`);
        else res.destroy();
      },
    });

  /** `sent`: the chunk was already written upstream (piped), and is flushed before the taps' work. */
  const tapBody = (body: Readable, sent?: () => void): void => {
    tapForwarded(body, legs.requestTaps, (n) => (ex.requestBytes += n), sent);
    body.on("end", () => charged(ex.requestRead, () => legs.requestTaps.end()));
  };
  req.on("error", () => legs.upstreamRequest?.destroy());

  const hold = ex.requestHold;
  // Tiny chunks joined (see coalesce.ts): a body in 1-byte chunks costs a write and a tap call per read, not per byte.
  const body = coalesced(req, ex.readGate, ex.requestRead);
  if (!hold) {
    const request = openUpstream(headersFor());
    // Piped before it is tapped: each chunk is sent on before the taps look at it (see sendResponse).
    body.pipe(request);
    tapBody(body, () => legs.upstreamRequest?.socket?.uncork());
  } else {
    tapBody(body);
    holdRequest(body, res, hold, {
      respond: (r) => respondFromProxy(ex, res, r.status, statusText(r.status), r.body, r.headers),
      forward: (whole, held) => {
        // A whole body goes with its exact length (none when there was no body at all).
        const request = openUpstream(whole === null || (opts.framing.kind === "none" && whole.length === 0) ? headersFor() : headersFor(whole.length));
        if (whole) request.end(whole);
        else {
          for (const c of held) request.write(c);
          body.pipe(request);
          body.resume();
        }
      },
    });
  }

  const end = endWithResponse(legs, addons, () => unschedule?.());
  ex.requestRead.turn?.spent(performance.now() - startedAt);
  return ex;
}

/** Framing is the proxy's own; `Expect: 100-continue` was answered by node's server already. */
const FRAMED_BY_PROXY = ["content-length", "expect"];
const KEEP_UPGRADE: ReadonlySet<string> = new Set(["upgrade"]);

/** The proxy's own answer in place of the upstream's (a 502, or a policy's response), on the record as such. */
function respondFromProxy(
  ex: ExchangeRecord,
  res: http.ServerResponse,
  status: number,
  statusMessage: string,
  body: string | Buffer,
  headers?: Record<string, string>,
): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  const all = { "content-type": "text/plain; charset=utf-8", ...headers, "content-length": String(bytes.length) };
  ex.response = { status, statusMessage, headers: all, source: "proxy" };
  ex.responseBytes = bytes.length;
  res.writeHead(status, statusMessage, all);
  res.end(bytes);
}

function statusText(status: number): string {
  return http.STATUS_CODES[status] ?? "";
}
