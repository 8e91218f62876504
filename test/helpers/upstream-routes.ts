/**
 * Request handler shared by the HTTPS and plain-HTTP test upstreams.
 * Every request is recorded (with its full body) before it is routed.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { gzipSync } from "node:zlib";
import { PatternByteStream } from "./pattern-bytes.js";

export interface RecordedRequest {
  method: string;
  url: string;
  httpVersion: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/** Mutable state one upstream instance shares with its handler. */
export interface UpstreamState {
  requests: RecordedRequest[];
  openSseStreams: number;
  timers: Set<NodeJS.Timeout>;
}

/** The JSON document `GET /gzip` serves (gzip-encoded). */
export const GZIP_JSON_BODY = {
  compressed: true,
  message: "hello from the gzip route",
  items: Array.from({ length: 50 }, (_, i) => ({ i, text: `item number ${i}` })),
} as const;

const PIECE_BYTES = 64 * 1024;

function intParam(url: URL, name: string, fallback: number): number {
  const value = Number.parseInt(url.searchParams.get(name) ?? "", 10);
  return Number.isFinite(value) && value >= 0 ? value : fallback;
}

function sendBody(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  res.writeHead(status, { "content-type": type, "content-length": String(bytes.length) });
  res.end(bytes);
}

function startTimer(state: UpstreamState, ms: number, fn: () => void): NodeJS.Timeout {
  const timer = setTimeout(() => {
    state.timers.delete(timer);
    fn();
  }, ms);
  state.timers.add(timer);
  return timer;
}

function stopTimer(state: UpstreamState, timer: NodeJS.Timeout | undefined): void {
  if (timer === undefined) return;
  clearTimeout(timer);
  state.timers.delete(timer);
}

function sendPattern(res: ServerResponse, n: number, seed: number, withLength: boolean): void {
  res.writeHead(200, {
    "content-type": "application/octet-stream",
    ...(withLength ? { "content-length": String(n) } : {}),
  });
  const pattern = new PatternByteStream(seed);
  let remaining = n;
  let gone = false;
  res.once("close", () => (gone = true));
  const pump = (): void => {
    while (remaining > 0 && !gone) {
      const piece = pattern.take(Math.min(PIECE_BYTES, remaining));
      remaining -= piece.length;
      if (!res.write(piece)) {
        res.once("drain", pump);
        return;
      }
    }
    if (!gone) res.end();
  };
  pump();
}

/** Writes one event at once, then one every `intervalMs`; `count` undefined = until the client leaves. */
function sendSse(state: UpstreamState, res: ServerResponse, count: number | undefined, intervalMs: number): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  state.openSseStreams++;
  let i = 0;
  let timer: NodeJS.Timeout | undefined;
  res.once("close", () => {
    stopTimer(state, timer);
    state.openSseStreams--;
  });
  const tick = (): void => {
    if (res.destroyed || res.writableEnded) return;
    if (count !== undefined && i >= count) {
      res.end();
      return;
    }
    i++;
    res.write(`id: ${i}\nevent: message\ndata: {"i":${i},"t":${Date.now()}}\n\n`);
    timer = startTimer(state, intervalMs, tick);
  };
  tick();
}

function jsonRpcReply(message: unknown): object | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  if (!("method" in message) || !("id" in message)) return undefined; // notification or response
  return { jsonrpc: "2.0", id: message.id, result: { ok: true } };
}

function sendMcpJson(res: ServerResponse, body: Buffer): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    const error = { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } };
    sendBody(res, 400, "application/json", JSON.stringify(error));
    return;
  }
  const replies = Array.isArray(parsed)
    ? parsed.map(jsonRpcReply).filter((r) => r !== undefined)
    : jsonRpcReply(parsed);
  if (replies === undefined || (Array.isArray(replies) && replies.length === 0)) {
    res.writeHead(202, { "content-length": "0" });
    res.end();
    return;
  }
  sendBody(res, 200, "application/json", JSON.stringify(replies));
}

function route(state: UpstreamState, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const url = new URL(req.url ?? "/", "http://upstream.invalid");
  const key = `${req.method} ${url.pathname}`;
  switch (key) {
    case "POST /echo":
      res.setHeader("x-upstream-saw-host", req.headers.host ?? "");
      sendBody(res, 200, "application/json", body);
      return;
    case "GET /bytes":
    case "GET /chunked":
      sendPattern(res, intParam(url, "n", 1024), intParam(url, "seed", 1), url.pathname === "/bytes");
      return;
    case "GET /gzip": {
      const gz = gzipSync(JSON.stringify(GZIP_JSON_BODY));
      res.setHeader("content-encoding", "gzip");
      sendBody(res, 200, "application/json", gz);
      return;
    }
    case "GET /sse":
      sendSse(state, res, intParam(url, "count", 3), intParam(url, "interval", 50));
      return;
    case "GET /sse-forever":
      sendSse(state, res, undefined, intParam(url, "interval", 50));
      return;
    case "POST /mcp-json":
      sendMcpJson(res, body);
      return;
    case "POST /slow": {
      const ms = intParam(url, "ms", 100);
      const timer = startTimer(state, ms, () => sendBody(res, 200, "text/plain", `slow response after ${ms} ms`));
      res.once("close", () => stopTimer(state, timer));
      return;
    }
    default:
      sendBody(res, 404, "text/plain", `not found: ${key}`);
  }
}

/** A `request` listener for `http(s).createServer` implementing the test routes. */
export function createUpstreamHandler(state: UpstreamState) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("error", () => res.destroy());
    res.on("error", () => undefined);
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      state.requests.push({
        method: req.method ?? "",
        url: req.url ?? "",
        httpVersion: req.httpVersion,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      });
      route(state, req, res, body);
    });
  };
}
