/**
 * Opening a CONNECT tunnel through an HTTP(S) proxy, for the preload's fetch dispatcher and http/https
 * agents. Part of the preload: runs on Node 20, imports nothing from the rest of the package.
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";
import tls from "node:tls";

export const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Agents for the CONNECT requests themselves. Not `agent: false`: that makes a new agent of the global
 * agent's class, which after the preload is the tunnelling one (endless recursion).
 */
const DIRECT_HTTP = new http.Agent({ keepAlive: false });
const DIRECT_HTTPS = new https.Agent({ keepAlive: false });

/** A host without the brackets of an IPv6 literal (`[::1]` → `::1`). */
export function bareHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1");
}

/** The SNI name for `host`: the one given, else the host itself unless it is an IP literal (no SNI then). */
export function tlsServername(host: string, given: string | undefined): string | undefined {
  const bare = bareHost(host);
  return given || (net.isIP(bare) ? undefined : bare);
}

/** `host:port`, with brackets around an IPv6 address. */
export function authorityOf(host: string, port: number): string {
  const bare = bareHost(host);
  return `${net.isIPv6(bare) ? `[${bare}]` : bare}:${port}`;
}

/** The `Proxy-Authorization` value for credentials in the proxy URL, if any. */
export function proxyAuthorization(proxy: URL): string | undefined {
  if (!proxy.username && !proxy.password) return undefined;
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`;
}

/** Resolves with a socket connected (through the proxy) to `host:port`; the socket carries no TLS yet. */
export function openTunnel(proxy: URL, host: string, port: number, timeoutMs = CONNECT_TIMEOUT_MS): Promise<net.Socket> {
  const authority = authorityOf(host, port);
  const secureProxy = proxy.protocol === "https:";
  const headers: Record<string, string> = { host: authority };
  const authorization = proxyAuthorization(proxy);
  if (authorization) headers["proxy-authorization"] = authorization;
  return new Promise((resolve, reject) => {
    const req = (secureProxy ? https : http).request({
      host: bareHost(proxy.hostname),
      port: Number(proxy.port) || (secureProxy ? 443 : 80),
      method: "CONNECT",
      path: authority,
      headers,
      agent: secureProxy ? DIRECT_HTTPS : DIRECT_HTTP,
    });
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`proxy ${proxy.host} did not answer CONNECT ${authority} within ${timeoutMs} ms`)), timeoutMs);
    req.once("connect", (res: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      if (settled) {
        socket.destroy();
        return;
      }
      settled = true;
      clearTimeout(timer);
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`proxy ${proxy.host} answered ${res.statusCode} ${res.statusMessage ?? ""} to CONNECT ${authority}`.trimEnd()));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.once("error", (err) => fail(new Error(`proxy ${proxy.host}: CONNECT ${authority} failed: ${err.message}`)));
    req.end();
  });
}

/** TLS over `socket` to `host`; resolves once the handshake is done. */
export function secureOver(socket: net.Socket, host: string, servername: string | undefined): Promise<tls.TLSSocket> {
  const name = tlsServername(host, servername);
  return new Promise((resolve, reject) => {
    const secure = tls.connect({ socket, host: bareHost(host), servername: name, ALPNProtocols: ["http/1.1"] });
    const onError = (err: Error): void => {
      secure.destroy();
      reject(err);
    };
    secure.once("error", onError);
    secure.once("secureConnect", () => {
      secure.off("error", onError);
      resolve(secure);
    });
  });
}
