import { randomUUID } from "node:crypto";
import type http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import type { Peer, TunnelInfo } from "./exchange.js";
import { formatTarget, parseConnectTarget, type Target } from "./target.js";
import { countForwarded } from "./body-taps.js";

/** What the proxy knows about the tunnel a request arrived through. */
export interface TunnelContext {
  info: TunnelInfo;
  secure: boolean;
  clientTls: string | null;
}

export type ConnectDecision =
  | { action: "intercept" }
  | { action: "passthrough" }
  | { action: "deny"; status: 403; reason: string };

export interface ConnectHandlerOptions {
  decide(target: Target, client: Peer): ConnectDecision;
  secureContextFor(host: string): tls.SecureContext;
  /** Hands a socket carrying HTTP (decrypted or plain) to the engine. */
  serve(socket: Duplex, tunnel: TunnelContext): void;
  refused(event: { client: Peer; target: string; status: number; reason: string }): void;
  clientTlsError(tunnel: TunnelInfo, err: Error): void;
  passthroughEnd(tunnel: TunnelInfo, stats: { bytesUp: number; bytesDown: number; error: string | null }): void;
  /** Receives the key-log lines of the client leg (--keylog). */
  keylog?: (line: Buffer) => void;
  /** How long a tunnel may take to send its first byte and, for TLS, to finish the handshake. */
  handshakeTimeoutMs?: number;
}

const DEFAULT_HANDSHAKE_TIMEOUT_MS = 30_000;

const TLS_HANDSHAKE = 0x16;

/** Handles a CONNECT request: validate the target, then tunnel it blind or terminate it and serve HTTP. */
export function handleConnect(opts: ConnectHandlerOptions, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  const client = peerOf(req.socket);
  socket.on("error", () => socket.destroy());
  const parsed = parseConnectTarget(req.url ?? "");
  if (!parsed.ok) {
    opts.refused({ client, target: printable(req.url ?? ""), status: 400, reason: parsed.reason });
    return refuse(socket, 400, "Bad Request", `bad CONNECT target: ${parsed.reason}`);
  }
  const target = parsed.target;
  const decision = opts.decide(target, client);
  if (decision.action === "deny") {
    opts.refused({ client, target: formatTarget(target), status: decision.status, reason: decision.reason });
    return refuse(socket, decision.status, "Forbidden", decision.reason);
  }
  const info: TunnelInfo = { id: randomUUID(), client, target, startedAt: Date.now() };
  if (decision.action === "passthrough") return passThrough(opts, info, socket, head);

  socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
  // A tunnel that stays silent, or never finishes its TLS handshake, is closed (and said so) after a while.
  const timeoutMs = opts.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  let reported = false;
  const tlsFailed = (err: Error): void => {
    if (reported) return;
    reported = true;
    opts.clientTlsError(info, err);
  };
  const timer = setTimeout(() => {
    tlsFailed(new Error(`no request and no completed TLS handshake within ${timeoutMs / 1000} s after CONNECT`));
    socket.destroy();
  }, timeoutMs);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  withFirstBytes(socket, head, (first) => {
    if (first[0] !== TLS_HANDSHAKE) {
      clearTimeout(timer);
      opts.serve(socket, { info, secure: false, clientTls: null });
      // The HTTP server reads the socket through 'data' events: it stays paused (bytes put back) otherwise.
      socket.resume();
      return;
    }
    const tlsSocket = new tls.TLSSocket(socket as net.Socket, {
      isServer: true,
      // The leaf names the host as the client spelled it ([::ffff:127.0.0.1] is checked as that address).
      secureContext: opts.secureContextFor(parsed.leafHost),
      ALPNProtocols: ["http/1.1"],
    });
    if (opts.keylog) tlsSocket.on("keylog", opts.keylog);
    const tunnel: TunnelContext = { info, secure: true, clientTls: null };
    let resumed = false;
    tlsSocket.once("secure", () => {
      clearTimeout(timer);
      tunnel.clientTls = tlsSocket.getProtocol() ?? null;
      resumed = tlsSocket.isSessionReused();
    });
    tlsSocket.on("error", (err) => {
      if (!tunnel.clientTls) tlsFailed(err);
      tlsSocket.destroy();
    });
    // A client that rejects our certificate may just close, without an alert: Node clients check it after
    // the handshake, Python's httpx over anyio never flushes the alert. Leaving during the handshake, or
    // after it without a single byte of request, is that case as far as the proxy can tell - unless the
    // handshake resumed a session: only a client that accepted our certificate before holds a ticket for it.
    // (undici opens spare connections, resumed from its session cache, and closes them unused: no warning.)
    tlsSocket.once("close", () => {
      if (!tunnel.clientTls) tlsFailed(new Error("the client closed the connection during the TLS handshake (no alert)"));
      else if (tlsSocket.bytesRead === 0 && !resumed) tlsFailed(new Error("the client closed the connection right after the TLS handshake, before sending a request"));
    });
    opts.serve(tlsSocket, tunnel);
  });
}

/** Waits for the first bytes of the tunnel without consuming them. */
function withFirstBytes(socket: Duplex, head: Buffer, then: (first: Buffer) => void): void {
  if (head.length > 0) {
    socket.unshift(head);
    then(head);
    return;
  }
  // The client left before saying anything: nothing to serve. (The socket comes from the HTTP server, which
  // allows half-open connections: without this it would stay open, CLOSE_WAIT, for good.)
  const onEnd = (): void => void socket.destroy();
  socket.once("end", onEnd);
  socket.once("data", (chunk: Buffer) => {
    socket.off("end", onEnd);
    // Paused with the bytes put back: whoever takes the socket next (TLS or the HTTP parser) reads them.
    socket.pause();
    socket.unshift(chunk);
    then(chunk);
  });
}

function passThrough(opts: ConnectHandlerOptions, info: TunnelInfo, socket: Duplex, head: Buffer): void {
  const stats = { bytesUp: head.length, bytesDown: 0, error: null as string | null };
  const upstream = net.connect({ host: info.target.host, port: info.target.port });
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    opts.passthroughEnd(info, stats);
  };
  let connected = false;
  upstream.once("connect", () => {
    connected = true;
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    countForwarded(socket, (n) => (stats.bytesUp += n));
    countForwarded(upstream, (n) => (stats.bytesDown += n));
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
  upstream.on("error", (err: NodeJS.ErrnoException) => {
    stats.error = err.code ?? err.message;
    if (connected) socket.destroy();
    else refuse(socket, 502, "Bad Gateway", `cannot reach ${formatTarget(info.target)}: ${stats.error}`);
  });
  upstream.on("close", () => {
    socket.destroy();
    end();
  });
  socket.on("close", () => {
    upstream.destroy();
    end();
  });
}

function refuse(socket: Duplex, status: number, text: string, reason: string): void {
  const body = `mcp-wiretap: ${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

export function peerOf(socket: net.Socket | Duplex | null | undefined): Peer {
  const s = socket as net.Socket | undefined;
  return { address: s?.remoteAddress ?? "unknown", port: s?.remotePort ?? 0 };
}

/** A CONNECT target as it may be logged: control characters escaped, length capped. */
export function printable(raw: string): string {
  const escaped = JSON.stringify(raw.slice(0, 300)).slice(1, -1);
  return raw.length > 300 ? `${escaped}…` : escaped;
}
