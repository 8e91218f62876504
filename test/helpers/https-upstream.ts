/**
 * Loopback upstream servers (HTTPS with the test PKI, or plain HTTP) that
 * record every request and serve the routes in `upstream-routes.ts`:
 *
 *   POST /echo                      byte-identical echo + `x-upstream-saw-host`
 *   GET  /bytes?n=N&seed=S          N pattern bytes with content-length
 *   GET  /chunked?n=N&seed=S        same bytes, chunked
 *   GET  /gzip                      gzip-encoded GZIP_JSON_BODY
 *   GET  /sse?count=N&interval=MS   N events (first at once, then every MS), then ends
 *   GET  /sse-forever?interval=MS   events until the client disconnects
 *   POST /mcp-json                  JSON-RPC `{"ok":true}` results, 202 for notifications
 *   POST /slow?ms=MS                answers after MS ms
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { testPki } from "./test-pki.js";
import { createUpstreamHandler, type RecordedRequest, type UpstreamState } from "./upstream-routes.js";

export { patternBytes, PatternByteStream } from "./pattern-bytes.js";
export { GZIP_JSON_BODY, type RecordedRequest } from "./upstream-routes.js";

export type LoopbackHost = "127.0.0.1" | "::1";

export interface UpstreamOptions {
  host?: LoopbackHost;
}

export interface HttpsUpstreamOptions extends UpstreamOptions {
  /** PEM server certificate (default: the test PKI's server cert). */
  cert?: string;
  /** PEM private key for `cert`. */
  key?: string;
}

export interface TestUpstream {
  /** Base URL, e.g. `https://127.0.0.1:4433` or `http://[::1]:8080` (no trailing slash). */
  url: string;
  port: number;
  host: LoopbackHost;
  /** Every completed request, in arrival order. */
  requests: RecordedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** TCP connections currently open. */
  readonly openConnections: number;
  /** `/sse` and `/sse-forever` responses currently open. */
  readonly openSseStreams: number;
  /** SNI server names of accepted TLS connections (`false` = none sent); empty for plain HTTP. */
  sniServerNames: (string | false)[];
  close(): Promise<void>;
}

function baseUrl(scheme: "http" | "https", host: LoopbackHost, port: number): string {
  return `${scheme}://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

async function listen(
  server: http.Server,
  scheme: "http" | "https",
  state: UpstreamState,
  host: LoopbackHost,
): Promise<TestUpstream> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const sniServerNames: (string | false)[] = [];
  server.on("connection", (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("secureConnection", (socket: TLSSocket) => sniServerNames.push(socket.servername ?? false));
  server.on("tlsClientError", () => undefined);
  server.on("clientError", (_err, socket: Socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    url: baseUrl(scheme, host, port),
    port,
    host,
    requests: state.requests,
    get connections() {
      return connections;
    },
    get openConnections() {
      return sockets.size;
    },
    get openSseStreams() {
      return state.openSseStreams;
    },
    sniServerNames,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of state.timers) clearTimeout(timer);
        state.timers.clear();
        // Resolve a turn later, so responses' 'close' handlers (SSE counters) have run.
        server.close(() => setImmediate(resolve));
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

function newState(): UpstreamState {
  return { requests: [], openSseStreams: 0, timers: new Set() };
}

/** HTTPS upstream on loopback, port 0, with the test PKI (or the given cert/key). */
export async function startHttpsUpstream(opts: HttpsUpstreamOptions = {}): Promise<TestUpstream> {
  const pki = opts.cert ? undefined : testPki();
  const cert = opts.cert ?? pki?.serverCertPem;
  const key = opts.key ?? pki?.serverKeyPem;
  if (opts.cert && !opts.key) throw new Error("startHttpsUpstream: `cert` given without `key`");
  const state = newState();
  const server = https.createServer({ cert, key, keepAlive: true }, createUpstreamHandler(state));
  return listen(server, "https", state, opts.host ?? "127.0.0.1");
}

/** Plain-HTTP upstream on loopback, port 0, same routes. */
export async function startHttpUpstream(opts: UpstreamOptions = {}): Promise<TestUpstream> {
  const state = newState();
  const server = http.createServer({ keepAlive: true }, createUpstreamHandler(state));
  return listen(server, "http", state, opts.host ?? "127.0.0.1");
}
