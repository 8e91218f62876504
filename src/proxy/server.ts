import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import { AddonChain } from "./addon-chain.js";
import { handleConnect, peerOf, printable, type ConnectDecision, type TunnelContext } from "./connect.js";
import { Engine } from "./engine.js";
import type { Addon, Peer } from "./exchange.js";
import type { ExchangeRecord } from "./exchange-record.js";
import { forwardExchange, type ForwardRoute, type Upstream } from "./forward.js";
import { declaresBody, requestFraming } from "./framing.js";
import { refuseRequest, refuseUpgrade, routeRequest } from "./route.js";
import type { Target } from "./target.js";
import { UpgradeLeg, type UpgradeStats } from "./upgrade.js";
import { findPrefixMapping, reverseRoute, type ReverseMapping } from "./reverse.js";
import net from "node:net";
import { proxyAuthRequiredResponse, PROXY_AUTH_BODY, PROXY_AUTH_CHALLENGE, type ProxyAuth } from "./proxy-auth.js";
import type { ProxyEvent } from "./proxy-events.js";
import { globToRegExp } from "../util/glob.js";
import { redactText, redactUrlQuery } from "../log/redact.js";
import { upstreamContext } from "./upstream-context.js";
import { ReadScheduler } from "./read-scheduler.js";

export interface ProxyServerOptions {
  host: string;
  port: number;
  /** Told every refusal, tunnel, websocket and engine problem (`records/proxy-records.ts` writes them). */
  report(e: ProxyEvent): void;
  addons: Addon[];
  /** Issues the certificate the client sees for a CONNECT host. */
  secureContextFor(host: string): tls.SecureContext;
  /** Trusted roots for the proxy→server leg. */
  upstreamCa: string[];
  insecureUpstream: boolean;
  /** Hosts tunnelled without decryption (globs). */
  passthrough: string[];
  /** Decides about CONNECT targets before any byte is exchanged (policy); default: intercept. */
  decideConnect?: (target: Target, client: Peer) => ConnectDecision | null;
  connectTimeoutMs?: number;
  /** Required Basic credentials for CONNECT and absolute-URI requests (mandatory beyond loopback). */
  proxyAuth?: ProxyAuth | null;
  /** Reverse mode: local prefixes or ports served as if they were these upstreams. */
  reverse?: ReverseMapping[];
  /** Key-log lines of both TLS legs (--keylog). */
  keylog?: (line: Buffer) => void;
  /** How long a request head may take to arrive (slowloris guard); default 60 s. */
  headersTimeoutMs?: number;
  /** How long a CONNECT tunnel may take to start talking and finish its TLS handshake; default 30 s. */
  handshakeTimeoutMs?: number;
  /** Why new traffic must be refused right now (e.g. records cannot be written in --on-log-error block), or null. */
  refuseTraffic?: () => string | null;
  /** More of the proxy's state for `/healthz` to show (the inspection budget's use, say). */
  health?: () => Record<string, unknown>;
  /** Share the event loop by peer (read-scheduler.ts); default true. */
  scheduleReads?: boolean;
}

/** The proxy: engine → exchange → addons, with everything a user meets at the network level. */
export class ProxyServer {
  private readonly engine: Engine;
  private readonly addons: AddonChain;
  private readonly upstream: Upstream;
  private readonly tunnels = new WeakMap<Duplex, TunnelContext>();
  private readonly reverseSockets = new WeakMap<Duplex, ReverseMapping>();
  private readonly reverseListeners: net.Server[] = [];
  private readonly openSockets = new Set<Duplex>();
  private readonly inFlight = new Map<ExchangeRecord, http.ServerResponse>();
  private readonly isPassthrough: (host: string) => boolean;
  private readonly report: (e: ProxyEvent) => void;
  private readonly scheduler: ReadScheduler | null;

  constructor(private readonly opts: ProxyServerOptions) {
    this.report = opts.report;
    this.scheduler = opts.scheduleReads === false ? null : new ReadScheduler();
    this.addons = new AddonChain(opts.addons, (addon, hook, err, flow) =>
      this.record({ type: "addon_error", addon, hook, err: errorText(err), ...(flow !== undefined ? { flow } : {}) }),
    );
    // One context for every upstream TLS connection: given `ca` instead, each new connection would parse
    // every trusted root again (~80 ms of CPU and ~1.3 MB for the ~270 roots of Node and the system).
    const tlsOptions = { secureContext: upstreamContext(opts.upstreamCa), rejectUnauthorized: !opts.insecureUpstream };
    this.upstream = {
      httpAgent: new http.Agent({ keepAlive: true, scheduling: "lifo" }),
      httpsAgent: new https.Agent({ keepAlive: true, scheduling: "lifo", ...tlsOptions }),
      insecure: opts.insecureUpstream,
      connectTimeoutMs: opts.connectTimeoutMs ?? 30_000,
    };
    if (opts.keylog) this.upstream.httpsAgent.on("keylog", opts.keylog);
    const matchers = opts.passthrough.map(globToRegExp);
    this.isPassthrough = (host) => matchers.some((m) => m.test(host));
    this.engine = new Engine({
      connect: (req, socket, head) => this.onConnect(req, socket, head),
      request: (req, res, requestTarget) => this.onRequest(req, res, requestTarget),
      upgrade: (req, socket, head) => this.onUpgrade(req, socket, head),
      malformed: (err, socket) => this.onMalformed(err, socket),
      error: (kind, err) => this.record({ type: "engine_error", kind, err: errorText(err) }),
    }, opts.headersTimeoutMs);
  }

  async listen(): Promise<{ host: string; port: number; reversePorts: number[] }> {
    const address = await this.engine.listen(this.opts.host, this.opts.port);
    const reversePorts: number[] = [];
    for (const mapping of this.opts.reverse ?? []) {
      if (mapping.local.kind !== "port") continue;
      reversePorts.push(await this.listenReverse(mapping, mapping.local.port));
    }
    return { ...address, reversePorts };
  }

  /** A listener of its own for one reverse mapping: its sockets are served by the engine like tunnels. */
  private listenReverse(mapping: ReverseMapping, port: number): Promise<number> {
    const server = net.createServer((socket) => {
      this.reverseSockets.set(socket, mapping);
      this.track(socket);
      this.engine.serveTunnel(socket);
    });
    this.reverseListeners.push(server);
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: this.opts.host, port }, () => resolve((server.address() as net.AddressInfo).port));
    });
  }

  /**
   * Stops accepting, lets exchanges in flight finish for up to `graceMs`, then closes what is left and
   * lets the addons report what was still open.
   */
  async close(graceMs: number): Promise<void> {
    for (const listener of this.reverseListeners) listener.close();
    const closed = this.engine.close();
    const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([closed, grace]);
    // What is cut off now ends on the record as stopped by the proxy, and before this returns (and the caller
    // logs "stop" and exits): records of exchanges and tunnels are written when their sockets close.
    for (const [ex, res] of this.inFlight) {
      if (!res.writableFinished) ex.fail({ code: "shutdown", message: "the proxy stopped before the exchange was complete" });
    }
    this.engine.closeAll();
    for (const socket of this.openSockets) socket.destroy();
    await closed;
    for (let waited = 0; (this.inFlight.size > 0 || this.openSockets.size > 0) && waited < 2_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    this.upstream.httpAgent.destroy();
    this.upstream.httpsAgent.destroy();
    this.scheduler?.close();
    await this.addons.close();
  }

  private onConnect(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    this.track(socket);
    if (!this.authorized(req)) {
      socket.on("error", () => socket.destroy());
      socket.end(proxyAuthRequiredResponse());
      return;
    }
    const unavailable = this.opts.refuseTraffic?.();
    if (unavailable) {
      socket.on("error", () => socket.destroy());
      this.record({ type: "refused_connect", client: peerOf(req.socket), status: 503, reason: unavailable });
      const body = `mcp-wiretap: ${unavailable}\n`;
      socket.end(`HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    handleConnect(
      {
        decide: (target, client) => {
          const verdict = this.opts.decideConnect?.(target, client);
          if (verdict) return verdict;
          return this.isPassthrough(target.host) ? { action: "passthrough" } : { action: "intercept" };
        },
        secureContextFor: (host) => this.opts.secureContextFor(host),
        ...(this.opts.keylog ? { keylog: this.opts.keylog } : {}),
        ...(this.opts.handshakeTimeoutMs ? { handshakeTimeoutMs: this.opts.handshakeTimeoutMs } : {}),
        serve: (tunnelSocket, tunnel) => {
          this.tunnels.set(tunnelSocket, tunnel);
          this.engine.serveTunnel(tunnelSocket);
        },
        refused: (e) => this.record({ type: "refused_connect", client: e.client, target: e.target, status: e.status, reason: e.reason }),
        clientTlsError: (t, err) => this.record({ type: "client_tls_error", tunnel: t.id, server: t.target, client: t.client, err: errorText(err) }),
        passthroughEnd: (t, stats) => {
          this.record({
            type: "tunnel",
            tunnel: t.id,
            client: t.client,
            server: t.target,
            bytesUp: stats.bytesUp,
            bytesDown: stats.bytesDown,
            durationMs: Date.now() - t.startedAt,
            ...(stats.error ? { error: stats.error } : {}),
          });
          this.addons.tunnelEnd(t, stats);
        },
      },
      req,
      socket,
      head,
    );
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse, requestTarget: string): void {
    const tunnel = this.tunnels.get(req.socket);
    const unavailable = this.opts.refuseTraffic?.() ?? null;
    if (!tunnel && requestTarget === "/healthz" && req.method === "GET") {
      req.resume();
      res.writeHead(unavailable ? 503 : 200, { "content-type": "application/json", "cache-control": "no-store" });
      const reads = this.scheduler ? { readScheduling: this.scheduler.usage() } : {};
      res.end(JSON.stringify({ ...(unavailable ? { status: "unavailable", reason: unavailable } : { status: "ok" }), ...this.opts.health?.(), ...reads }));
      return;
    }
    if (unavailable) {
      req.resume();
      this.record({ type: "refused_request", client: peerOf(req.socket), status: 503, reason: unavailable });
      refuseRequest(res, 503, unavailable);
      return;
    }
    const reverse = tunnel ? undefined : this.reverseFor(req, requestTarget);
    if (reverse) {
      this.forward(req, res, reverseRoute(reverse, req, requestTarget), tunnel);
      return;
    }
    if (!tunnel && !this.authorized(req)) {
      req.resume();
      res.writeHead(407, { ...PROXY_AUTH_CHALLENGE, "content-type": "text/plain; charset=utf-8" });
      res.end(PROXY_AUTH_BODY);
      return;
    }
    const routed = routeRequest(req, requestTarget, tunnel);
    if (!routed.ok) {
      this.logRefused(req, tunnel, routed.status, routed.reason);
      req.resume();
      refuseRequest(res, routed.status, routed.reason);
      return;
    }
    this.forward(req, res, routed.route, tunnel);
  }

  /** Forwards a routed request, unless its body's framing is one the upstream could read otherwise (400). */
  private forward(req: http.IncomingMessage, res: http.ServerResponse, route: ForwardRoute, tunnel: TunnelContext | undefined): void {
    const framed = requestFraming(req);
    if (!framed.ok) {
      this.logRefused(req, tunnel, 400, framed.reason);
      req.resume();
      refuseRequest(res, 400, framed.reason, { close: true });
      return;
    }
    const ex = forwardExchange(this.addons, this.upstream, route, req, res, { framing: framed.framing, ...this.scheduling() });
    this.inFlight.set(ex, res);
    res.once("close", () => this.inFlight.delete(ex));
  }

  /**
   * An `Upgrade` request (WebSocket): an ordinary exchange until the upstream answers 101, a raw pipe after.
   * One with a body is refused: node's server hands its body over as the first bytes of the new protocol,
   * which would reach the upstream unjudged. An upgrade to anything but WebSocket (h2c: HTTP/2 requests the
   * proxy would not read) is not offered upstream: the request goes as an ordinary one.
   */
  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    this.track(socket);
    socket.on("error", () => socket.destroy());
    const tunnel = this.tunnels.get(req.socket);
    const reverse = tunnel ? undefined : this.reverseFor(req, req.url ?? "/");
    if (!reverse && !tunnel && !this.authorized(req)) {
      socket.end(proxyAuthRequiredResponse());
      return;
    }
    const unavailable = this.opts.refuseTraffic?.() ?? null;
    const routed = unavailable
      ? ({ ok: false, status: 503, reason: unavailable } as const)
      : reverse
        ? ({ ok: true, route: reverseRoute(reverse, req, req.url ?? "/") } as const)
        : routeRequest(req, req.url ?? "/", tunnel);
    if (!routed.ok) {
      this.logRefused(req, tunnel, routed.status, routed.reason);
      refuseUpgrade(socket, routed.status, routed.reason);
      return;
    }
    const framed = requestFraming(req);
    if (!framed.ok || declaresBody(framed.framing)) {
      const reason = framed.ok ? "an Upgrade request must not carry a body" : framed.reason;
      this.logRefused(req, tunnel, 400, reason);
      refuseUpgrade(socket, 400, reason);
      return;
    }
    const route = routed.route;
    const leg = new UpgradeLeg(req, socket, head);
    const startedAt = Date.now();
    const websocket = /^\s*websocket\s*$/i.test(req.headers.upgrade ?? "");
    const done = (stats: UpgradeStats): void => this.websocketRecord(route, ex.id, startedAt, stats);
    const ex = forwardExchange(this.addons, this.upstream, route, req, leg.res, { framing: framed.framing, upgrade: { leg, ...(websocket ? { done } : {}) }, ...this.scheduling() });
    this.inFlight.set(ex, leg.res);
    socket.once("close", () => this.inFlight.delete(ex));
  }

  /** A WebSocket the upstream switched to has closed. */
  private websocketRecord(route: ForwardRoute, flow: string, startedAt: number, stats: UpgradeStats): void {
    this.record({
      type: "websocket",
      flow,
      client: route.client,
      server: route.target,
      path: route.path,
      status: stats.status,
      bytesUp: stats.bytesUp,
      bytesDown: stats.bytesDown,
      durationMs: Date.now() - startedAt,
      ...(stats.error ? { error: stats.error } : {}),
    });
  }

  private logRefused(req: http.IncomingMessage, tunnel: TunnelContext | undefined, status: number, reason: string): void {
    this.record({
      type: "refused_request",
      client: peerOf(req.socket),
      server: tunnel ? tunnel.info.target : null,
      method: req.method,
      host: req.headers.host?.slice(0, 300) ?? null,
      status,
      reason,
    });
  }

  /** A request the parser refused (e.g. a NUL byte in a CONNECT target) is refused on the record too. */
  private onMalformed(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
    const line = (err.rawPacket ?? Buffer.alloc(0)).subarray(0, 1024).toString("latin1").split("\r\n")[0] ?? "";
    const tunnel = this.tunnels.get(socket);
    const client = tunnel ? tunnel.info.client : peerOf(socket);
    const connect = /^CONNECT /i.test(line);
    this.record({
      type: "malformed_request",
      connect,
      client,
      ...(connect ? { target: printable(line.slice(8).replace(/ HTTP\/[\d.]+$/, "")) } : { requestLine: printable(redactText(redactUrlQuery(line))) }),
      ...(tunnel ? { server: tunnel.info.target } : {}),
      reason: `malformed HTTP request (${err.code ?? err.message})`,
    });
  }

  /** A reverse-mode mapping for an origin-form request: by the listener it came in on, or by path prefix. */
  private reverseFor(req: http.IncomingMessage, requestTarget: string): ReverseMapping | undefined {
    const byPort = this.reverseSockets.get(req.socket);
    if (byPort) return byPort;
    if (!requestTarget.startsWith("/") || !this.opts.reverse?.length) return undefined;
    return findPrefixMapping(this.opts.reverse, requestTarget);
  }

  /** Proxy-level requests need the credentials when --proxy-auth is set; a failure is on the record. */
  private authorized(req: http.IncomingMessage): boolean {
    const auth = this.opts.proxyAuth;
    if (!auth || auth.allows(req.headers["proxy-authorization"])) return true;
    const client = peerOf(req.socket);
    const reason = req.headers["proxy-authorization"] ? "wrong proxy credentials" : "proxy credentials missing";
    this.record({ type: req.method === "CONNECT" ? "refused_connect" : "refused_request", client, status: 407, reason });
    return false;
  }

  private scheduling(): { scheduler?: ReadScheduler } {
    return this.scheduler ? { scheduler: this.scheduler } : {};
  }

  /** Every record about the proxy itself starts as a typed event, shaped by the records module. */
  private record(e: ProxyEvent): void {
    this.report(e);
  }

  private track(socket: Duplex): void {
    this.openSockets.add(socket);
    socket.once("close", () => this.openSockets.delete(socket));
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
