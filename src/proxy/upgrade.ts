import http from "node:http";
import type net from "node:net";
import type { Duplex } from "node:stream";
import { countForwarded } from "./body-taps.js";

export interface UpgradeStats {
  bytesUp: number;
  bytesDown: number;
  error: string | null;
  status: number | null;
}

/** Bytes a client may send after its Upgrade request head before the upstream has answered (then it is paused). */
const MAX_HELD_BYTES = 64 * 1024;

/**
 * The client's side of an `Upgrade` request (a WebSocket handshake), from the HTTP server's 'upgrade' event.
 *
 * Until the upstream answers, the exchange is an ordinary one, answered through `res`: a server that does not
 * switch (a `200` event stream, a `404`) is recorded, decoded, judged and enforced like any response, and the
 * connection is closed after it. Only a `101` makes a raw pipe. Bytes the client sends after its head are
 * held meanwhile: they reach the upstream only once it has switched protocols, and never otherwise.
 */
export class UpgradeLeg {
  readonly res: http.ServerResponse;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private state: "waiting" | "ordinary" | "switched" = "waiting";
  private readonly onData = (chunk: Buffer): void => {
    if (this.state !== "waiting") return;
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes > MAX_HELD_BYTES) this.socket.pause();
  };

  constructor(
    req: http.IncomingMessage,
    private readonly socket: Duplex,
    head: Buffer,
  ) {
    this.res = new http.ServerResponse(req);
    this.res.shouldKeepAlive = false;
    this.res.assignSocket(socket as net.Socket);
    this.res.once("finish", () => {
      // Answered (by the upstream, or by the proxy itself): whatever the client sent after its head is dropped.
      if (this.state === "waiting") this.ordinary();
      socket.end();
    });
    if (head.length > 0) this.onData(head);
    // Read (and hold or drop) whatever comes: a client that leaves is noticed, and its exchange ends as aborted.
    socket.on("data", this.onData);
    socket.on("end", () => socket.destroy());
    socket.on("error", () => socket.destroy());
  }

  /** The upstream answered with something other than 101: what the client sent after its head is dropped. */
  ordinary(): void {
    this.state = "ordinary";
    this.held = [];
    this.socket.resume();
  }

  /** The upstream switched protocols: its 101 goes to the client, then bytes are piped both ways untouched. */
  switched(upRes: http.IncomingMessage, upstream: Duplex, upHead: Buffer, done: (stats: UpgradeStats) => void): void {
    this.state = "switched";
    const client = this.socket;
    client.off("data", this.onData);
    this.res.detachSocket(client as net.Socket);
    const stats: UpgradeStats = { bytesUp: 0, bytesDown: 0, error: null, status: 101 };
    let head = `HTTP/1.1 101 ${upRes.statusMessage ?? "Switching Protocols"}\r\n`;
    for (let i = 0; i + 1 < upRes.rawHeaders.length; i += 2) head += `${upRes.rawHeaders[i]}: ${upRes.rawHeaders[i + 1]}\r\n`;
    client.write(`${head}\r\n`);
    if (upHead.length > 0) {
      client.write(upHead);
      stats.bytesDown += upHead.length;
    }
    for (const chunk of this.held) upstream.write(chunk);
    stats.bytesUp += this.heldBytes;
    this.held = [];
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      client.destroy();
      upstream.destroy();
      done(stats);
    };
    upstream.on("error", (err: NodeJS.ErrnoException) => {
      stats.error = err.code ?? err.message;
      finish();
    });
    client.on("error", finish);
    client.on("close", finish);
    upstream.on("close", finish);
    countForwarded(client, (n) => (stats.bytesUp += n));
    countForwarded(upstream, (n) => (stats.bytesDown += n));
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }
}
