import type http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import type { ForwardRoute } from "./forward.js";
import { formatTarget } from "./target.js";
import { countForwarded } from "./reclaim.js";

export interface UpgradeStats {
  bytesUp: number;
  bytesDown: number;
  error: string | null;
  status: number | null;
}

/**
 * Forwards an `Upgrade` request (WebSocket) unchanged: the request head goes to the real server as the
 * client wrote it, and from then on bytes are piped both ways untouched.
 */
export function forwardUpgrade(
  route: ForwardRoute,
  tlsOptions: tls.ConnectionOptions,
  req: http.IncomingMessage,
  client: Duplex,
  head: Buffer,
  done: (stats: UpgradeStats) => void,
  keylog?: (line: Buffer) => void,
): void {
  const stats: UpgradeStats = { bytesUp: head.length, bytesDown: 0, error: null, status: null };
  const { host, port } = route.target;
  const upstream = route.secure
    ? tls.connect({ ...tlsOptions, host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ["http/1.1"] })
    : net.connect({ host, port });
  if (keylog) upstream.on("keylog", keylog);
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    client.destroy();
    upstream.destroy();
    done(stats);
  };
  upstream.once(route.secure ? "secureConnect" : "connect", () => {
    upstream.write(requestHead(req, route.path, route.hostHeader));
    if (head.length > 0) upstream.write(head);
    countForwarded(client, (n) => (stats.bytesUp += n));
    countForwarded(
      upstream,
      (n) => (stats.bytesDown += n),
      (c) => {
        if (stats.status === null) stats.status = statusOf(c);
      },
    );
    client.pipe(upstream);
    upstream.pipe(client);
  });
  upstream.on("error", (err: NodeJS.ErrnoException) => {
    stats.error = err.code ?? err.message;
    if (stats.bytesDown === 0 && client.writable) {
      const body = `mcp-wiretap: cannot reach ${formatTarget(route.target)}: ${stats.error}\n`;
      client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    }
    finish();
  });
  client.on("error", () => finish());
  upstream.on("close", finish);
  client.on("close", finish);
}

function requestHead(req: http.IncomingMessage, path: string, hostHeader: string | undefined): string {
  let head = `${req.method} ${path} HTTP/${req.httpVersion}\r\n`;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (/^proxy-/i.test(name)) continue;
    const value = hostHeader && name.toLowerCase() === "host" ? hostHeader : req.rawHeaders[i + 1];
    head += `${name}: ${value}\r\n`;
  }
  return `${head}\r\n`;
}

function statusOf(chunk: Buffer): number | null {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(chunk.subarray(0, 16).toString("latin1"));
  return match ? Number(match[1]) : null;
}
