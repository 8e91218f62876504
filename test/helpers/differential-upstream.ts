/**
 * The upstream of the differential tests: a raw TLS (test PKI) or plain TCP server that records the exact
 * bytes each connection sends, and answers whatever a lenient server would read from them (node:http with
 * `insecureHTTPParser`, fed through a recording stream). `differential-check.ts` parses the recorded bytes
 * again, offline, and compares them with the proxy's records.
 *
 * Answers: a JSON-RPC request gets a JSON result naming the tool it ran; notifications get 202; anything
 * else 200 "ok". An Upgrade request is answered, by default, as an ordinary request (the server ignores
 * Upgrade, as most MCP servers do) with a 200 event stream carrying a server notification with an AWS key;
 * with `switchProtocols` set it gets a 101 and the connection echoes from then on.
 */
import http from "node:http";
import net from "node:net";
import { Duplex } from "node:stream";
import tls from "node:tls";
import { testPki } from "./test-pki.js";

/** What the upstream's event stream leaks to a client that asked to upgrade (secrets detector bait). */
export const LEAKED_KEY = ["AKIA", "Z3M5Q7K2W9R4X6BT"].join("");

export interface DifferentialUpstream {
  port: number;
  /** `127.0.0.1:PORT`, as records name the server. */
  authority: string;
  /** The exact bytes received, one Buffer per connection, in order of arrival. */
  readonly connections: readonly Buffer[];
  /** Answer Upgrade requests with 101 (and echo) instead of treating them as ordinary requests. */
  switchProtocols: boolean;
  close(): Promise<void>;
}

/** A socket seen through a stream that keeps a copy of every byte read from it. */
class RecordingStream extends Duplex {
  constructor(
    private readonly socket: net.Socket,
    record: (chunk: Buffer) => void,
  ) {
    super();
    socket.on("data", (chunk: Buffer) => {
      record(chunk);
      if (!this.push(chunk)) socket.pause();
    });
    socket.on("end", () => this.push(null));
    socket.on("close", () => this.destroy());
    socket.on("error", () => this.destroy());
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.socket.destroyed) return done();
    this.socket.write(chunk, () => done());
  }

  override _final(done: () => void): void {
    this.socket.end();
    done();
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    this.socket.destroy();
    done(err);
  }
}

/** The body as a lenient server reads it: UTF-8 with replacement characters, a BOM skipped. */
export function lenientJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8").replace(/^\uFEFF/, ""));
  } catch {
    return undefined;
  }
}

function answerRpc(message: unknown): object | undefined {
  if (typeof message !== "object" || message === null || !("method" in message) || !("id" in message)) return undefined;
  const params = (message as { params?: { name?: unknown } }).params;
  const text = `ran ${String(params?.name ?? (message as { method: unknown }).method)}`;
  return { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text }] } };
}

function answer(req: http.IncomingMessage, res: http.ServerResponse, body: Buffer): void {
  res.on("error", () => undefined);
  if (req.headers.upgrade !== undefined) {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const leak = { jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `key=${LEAKED_KEY}` } };
    res.end(`event: message\ndata: ${JSON.stringify(leak)}\n\n`);
    return;
  }
  const parsed = lenientJson(body);
  const replies = Array.isArray(parsed) ? parsed.map(answerRpc).filter((r) => r !== undefined) : answerRpc(parsed);
  if (parsed !== undefined && (replies === undefined || (Array.isArray(replies) && replies.length === 0))) {
    res.writeHead(202, { "content-length": "0" });
    res.end();
    return;
  }
  const text = replies === undefined ? "ok" : JSON.stringify(replies);
  res.writeHead(200, { "content-type": replies === undefined ? "text/plain" : "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export async function startDifferentialUpstream(opts: { tls: boolean }): Promise<DifferentialUpstream> {
  const connections: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const lenient = http.createServer({ insecureHTTPParser: true, keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => undefined);
    req.on("end", () => answer(req, res, Buffer.concat(chunks)));
  });
  lenient.on("clientError", (_err, socket: Duplex) => socket.destroy());
  const onUpgrade = (_req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", () => undefined);
    socket.write("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
    if (head.length > 0) socket.write(head);
    socket.pipe(socket);
  };
  const onSocket = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    const index = connections.push(Buffer.alloc(0)) - 1;
    lenient.emit("connection", new RecordingStream(socket, (chunk) => (connections[index] = Buffer.concat([connections[index]!, chunk]))));
  };
  const pki = testPki();
  const server = opts.tls
    ? tls.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem, ALPNProtocols: ["http/1.1"] }, onSocket)
    : net.createServer(onSocket);
  server.on("tlsClientError", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  let switching = false;
  return {
    port,
    authority: `127.0.0.1:${port}`,
    connections,
    get switchProtocols() {
      return switching;
    },
    set switchProtocols(on: boolean) {
      switching = on;
      // Without an 'upgrade' listener node:http reads an Upgrade request as an ordinary one, body included.
      lenient.removeListener("upgrade", onUpgrade);
      if (on) lenient.on("upgrade", onUpgrade);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
