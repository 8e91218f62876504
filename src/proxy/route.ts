import http from "node:http";
import type { Duplex } from "node:stream";
import type { TunnelContext } from "./connect.js";
import type { ForwardRoute } from "./forward.js";
import { headerValue } from "./headers.js";
import { formatTarget, parseHostHeader, validateHost, validatePort } from "./target.js";

export type RouteResult =
  | { ok: true; route: ForwardRoute }
  | { ok: false; status: 400 | 421 | 503; reason: string };

/**
 * Where a request really goes. Inside a tunnel that is the CONNECT target, and a Host header naming
 * another host is refused (421): policy must judge the destination the client actually reaches.
 */
export function routeRequest(req: http.IncomingMessage, requestTarget: string, tunnel: TunnelContext | undefined): RouteResult {
  const client = { address: req.socket.remoteAddress ?? "unknown", port: req.socket.remotePort ?? 0, tls: null as string | null };
  // RFC 9112 §3.2: more than one Host line is refused. Node keeps the first, but the raw headers (forwarded
  // as they are) would carry both, and an upstream that reads the last one serves another host than judged.
  if (countHeader(req.rawHeaders, "host") > 1) return { ok: false, status: 400, reason: "request has more than one Host header" };
  if (tunnel) {
    client.address = tunnel.info.client.address;
    client.port = tunnel.info.client.port;
    client.tls = tunnel.clientTls;
    const target = tunnel.info.target;
    const hostHeader = headerValue(req.headers.host);
    if (hostHeader === undefined) return { ok: false, status: 400, reason: "request has no Host header" };
    const named = parseHostHeader(hostHeader, target.port);
    if (!named.ok || named.target.host !== target.host || named.target.port !== target.port) {
      return {
        ok: false,
        status: 421,
        reason: `Host header ${JSON.stringify(hostHeader.slice(0, 300))} does not name the CONNECT target ${formatTarget(target)}`,
      };
    }
    const path = requestTarget.startsWith("/") ? requestTarget : originPath(requestTarget);
    if (path === null) return { ok: false, status: 400, reason: "request target must be origin-form inside a tunnel" };
    return { ok: true, route: { mode: tunnel.secure ? "mitm" : "plain-connect", target, secure: tunnel.secure, client, path } };
  }
  let url: URL;
  try {
    url = new URL(requestTarget);
  } catch {
    return {
      ok: false,
      status: 400,
      reason: "this is a proxy: send absolute-URI requests or CONNECT (set HTTPS_PROXY / HTTP_PROXY to its address)",
    };
  }
  if (url.protocol !== "http:") return { ok: false, status: 400, reason: `unsupported scheme ${url.protocol} (use CONNECT for https)` };
  // RFC 9110 §4.2.4: userinfo in a request target is an error (and would otherwise be dropped silently).
  if (url.username !== "" || url.password !== "") return { ok: false, status: 400, reason: "request target must not contain userinfo" };
  const host = validateHost(url.hostname);
  if (!host.ok) return { ok: false, status: 400, reason: host.reason };
  const port = url.port === "" ? 80 : validatePort(url.port);
  if (port === null) return { ok: false, status: 400, reason: "port must be 1-65535" };
  const target = { host: host.host, port };
  // RFC 9112 §3.2.2: the request target's authority replaces the client's Host header (which may name
  // another host, or be missing in HTTP/1.0): the upstream must serve the host that policy judged.
  return { ok: true, route: { mode: "plain-proxy", target, secure: false, client, path: `${url.pathname}${url.search}`, hostHeader: url.host } };
}

function countHeader(raw: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) n++;
  return n;
}

function originPath(absolute: string): string | null {
  try {
    const url = new URL(absolute);
    return `${url.pathname}${url.search}`;
  } catch {
    return null;
  }
}

/**
 * Answers a request the proxy refuses, as one line of plain text. `close`: the connection ends with it (what
 * follows a message of doubtful framing is not read as a request).
 */
export function refuseRequest(res: http.ServerResponse, status: number, reason: string, { close = false } = {}): void {
  const body = `mcp-wiretap: ${reason}\n`;
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body), ...(close ? { connection: "close" } : {}) });
  res.end(body);
}

/** The same, on the raw socket of an `Upgrade` request; the connection ends with it. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = `mcp-wiretap: ${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? "Refused"}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
