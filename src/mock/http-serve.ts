/**
 * `mock --port N`: Streamable HTTP on loopback. POST carries the client's messages; an answer comes as JSON,
 * or as an event stream when progress goes before it. A session id is issued at initialize; GET (no server
 * stream) is refused with 405; DELETE ends the session. Requests that name another host or come from a
 * page on another origin are refused (a web page must not be able to drive a local server).
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { MockServer, Reply } from "./mock-server.js";
import { LegacySessions } from "./legacy-serve.js";

/** Largest request body read; larger is refused with 413 (promise 3). */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export interface ServingHttp {
  url: string;
  close(): Promise<void>;
}

export async function serveHttp(server: MockServer, port: number, opts: { legacy?: boolean } = {}): Promise<ServingHttp> {
  const sessions = new Set<string>();
  const legacy = opts.legacy ? new LegacySessions(server) : null;
  const listener = http.createServer((req, res) => {
    if (!fromLoopback(req)) return end(res, 403, "only loopback clients (Host and Origin) may use this mock");
    if (legacy) return serveLegacy(legacy, req, res);
    if (req.method === "GET") return end(res, 405, "no server-initiated stream");
    if (req.method === "DELETE") {
      const id = req.headers["mcp-session-id"];
      if (typeof id === "string") sessions.delete(id);
      return end(res, 200, "");
    }
    if (req.method !== "POST") return end(res, 405, "POST, DELETE");
    readBody(req, (body) => {
      if (body === null) return end(res, 413, `body over ${MAX_BODY_BYTES} bytes`);
      const text = body.toString("utf8");
      const replies = server.receiveText(text);
      const headers: Record<string, string> = {};
      if (/"method"\s*:\s*"initialize"/.test(text) && replies.some((r) => "result" in r.message)) {
        const id = randomUUID();
        // Sessions are remembered only to be ended; a bounded set, the oldest forgotten first.
        sessions.add(id);
        if (sessions.size > 10_000) sessions.delete(sessions.values().next().value as string);
        headers["mcp-session-id"] = id;
      }
      if (replies.length === 0) return end(res, 202, "", headers);
      if (replies.length === 1 && replies[0]!.atMs === 0) {
        const json = JSON.stringify(replies[0]!.message);
        res.writeHead(200, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(json) });
        return res.end(json);
      }
      stream(res, replies, headers);
    });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(port, "127.0.0.1", () => resolve());
  });
  const address = listener.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/${legacy ? "sse" : "mcp"}`,
    close: () =>
      new Promise((resolve) => {
        legacy?.closeAll();
        listener.closeAllConnections();
        listener.close(() => resolve());
      }),
  };
}

/** Legacy HTTP+SSE: GET opens a session's stream, POST /message?sessionId=… feeds it (answers on the stream). */
function serveLegacy(legacy: LegacySessions, req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (req.method === "GET") {
    if (!legacy.open(res)) end(res, 503, "too many open streams");
    return;
  }
  if (req.method !== "POST") return end(res, 405, "GET, POST");
  readBody(req, (body) => {
    if (body === null) return end(res, 413, `body over ${MAX_BODY_BYTES} bytes`);
    if (!legacy.post(url.searchParams.get("sessionId"), body.toString("utf8"))) return end(res, 404, "no such session");
    end(res, 202, "Accepted");
  });
}

function stream(res: http.ServerResponse, replies: Reply[], headers: Record<string, string>): void {
  res.writeHead(200, { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" });
  let left = replies.length;
  const timers: NodeJS.Timeout[] = [];
  res.once("close", () => timers.forEach(clearTimeout));
  for (const reply of replies) {
    const write = (): void => {
      res.write(`event: message\ndata: ${JSON.stringify(reply.message)}\n\n`);
      if (--left === 0) res.end();
    };
    if (reply.atMs > 0) timers.push(setTimeout(write, reply.atMs));
    else write();
  }
}

function fromLoopback(req: http.IncomingMessage): boolean {
  const host = req.headers.host ?? "";
  const hostname = host.replace(/:\d+$/, "");
  if (!LOOPBACK_HOSTS.has(hostname)) return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return LOOPBACK_HOSTS.has(new URL(origin).hostname) || LOOPBACK_HOSTS.has(`[${new URL(origin).hostname}]`);
  } catch {
    return false;
  }
}

function readBody(req: http.IncomingMessage, done: (body: Buffer | null) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      over = true;
      chunks.length = 0;
      return;
    }
    if (!over) chunks.push(chunk);
  });
  req.once("end", () => done(over ? null : Buffer.concat(chunks)));
  req.once("error", () => {});
}

function end(res: http.ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
