import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { loadAssets, SERVED_CSP, servedPage } from "./assets.js";
import { UiGuard } from "./guard.js";
import type { RecordHistory } from "./record-history.js";

/** Live batches go out at most this often; the page redraws once per batch. */
const FEED_INTERVAL_MS = 100;
/** Lines per feed event; a client further behind catches up over several. */
const FEED_BATCH_LINES = 5_000;
/** SSE comment sent when idle, so that proxies and the browser keep the stream open. */
const KEEPALIVE_MS = 15_000;

export interface UiServerOptions {
  port: number;
  history: RecordHistory;
  /** What the page says it shows: "live" (a running proxy) or the files opened. */
  source: { kind: "live" | "files"; follow: boolean; description: string };
}

export interface RunningUi {
  port: number;
  /** The URL with the token, as printed in the banner. */
  url: string;
  close(): Promise<void>;
}

/** Serves the web UI on 127.0.0.1 only (loopback: it shows decrypted traffic). */
export async function startUiServer(opts: UiServerOptions): Promise<RunningUi> {
  const assets = loadAssets();
  let guard: UiGuard | null = null;
  const feeds = new Set<() => void>();

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    res.setHeader("Content-Security-Policy", SERVED_CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    // The first URL holds the token: never sent on as a referrer, never cached.
    res.setHeader("Referrer-Policy", "no-referrer");
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("X-Frame-Options", "DENY");
    if (!guard) return end(res, 503, "starting");
    const refusal = guard.check(req, url);
    if (refusal) return end(res, refusal.status, refusal.reason);
    if (req.method !== "GET" && req.method !== "HEAD") return end(res, 405, "method not allowed");
    if (url.pathname === "/") {
      if (guard.presentedInUrl(url)) {
        // Trade the token in the address bar for a cookie, then drop it from the URL.
        res.writeHead(303, { "Set-Cookie": guard.setCookieHeader(), Location: "/" });
        return void res.end();
      }
      return send(res, "text/html; charset=utf-8", servedPage());
    }
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204);
      return void res.end();
    }
    if (url.pathname === "/app.js") return send(res, "text/javascript; charset=utf-8", assets.js);
    if (url.pathname === "/app.css") return send(res, "text/css; charset=utf-8", assets.css);
    if (url.pathname === "/api/info") return send(res, "application/json", JSON.stringify(opts.source));
    if (url.pathname === "/api/records") return records(res, url);
    if (url.pathname === "/api/feed") return feed(req, res, url);
    return end(res, 404, "not found");
  });

  function records(res: ServerResponse, url: URL): void {
    const from = Number(url.searchParams.get("from") ?? "0") || 0;
    const { from: first, lines } = opts.history.slice(from);
    res.writeHead(200, {
      "Content-Type": "application/x-ndjson; charset=utf-8",
      "X-Wiretap-First": String(first),
      "X-Wiretap-Skipped": String(first - from),
    });
    // Written in pieces: one string of 100,000 records would double the memory they take.
    for (let i = 0; i < lines.length; i += 2_000) res.write(lines.slice(i, i + 2_000).join("\n") + "\n");
    res.end();
  }

  function feed(req: IncomingMessage, res: ServerResponse, url: URL): void {
    let cursor = Number(url.searchParams.get("from") ?? String(opts.history.end)) || 0;
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", Connection: "keep-alive" });
    res.write(": mcp-wiretap feed\n\n");
    let timer: NodeJS.Timeout | null = null;
    let waitingDrain = false;
    const flush = (): void => {
      timer = null;
      if (waitingDrain || res.destroyed) return;
      while (cursor < opts.history.end) {
        const { from, lines } = opts.history.slice(cursor, FEED_BATCH_LINES);
        // Lines the history let go before this client read them: the page says how many it missed.
        const skipped = from - cursor;
        cursor = from + lines.length;
        // Lines go as JSON strings: one malformed line (a followed file can hold anything) costs only itself.
        const ok = res.write(`data: {"from":${from},"skipped":${skipped},"lines":${JSON.stringify(lines)}}\n\n`);
        if (!ok) {
          // A slow page: stop writing until it drains; what arrives meanwhile waits in the history.
          waitingDrain = true;
          res.once("drain", () => {
            waitingDrain = false;
            schedule();
          });
          return;
        }
      }
    };
    const schedule = (): void => {
      timer ??= setTimeout(flush, FEED_INTERVAL_MS);
    };
    const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
    const unsubscribe = opts.history.onAppend(schedule);
    const stop = (): void => {
      unsubscribe();
      clearInterval(keepalive);
      if (timer) clearTimeout(timer);
      feeds.delete(stop);
      if (!res.destroyed) res.end();
    };
    feeds.add(stop);
    req.on("close", stop);
    schedule();
  }

  // The feed is SSE: a WebSocket upgrade is refused, after the same checks (a foreign Origin gets 403).
  server.on("upgrade", (req: IncomingMessage, socket: Duplex) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const status = guard ? (guard.check(req, url)?.status ?? 501) : 503;
    socket.end(`HTTP/1.1 ${status} ${status === 403 ? "Forbidden" : status === 401 ? "Unauthorized" : "Not Implemented"}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  guard = new UiGuard(port);
  const url = guard.url();
  return {
    port,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stop of [...feeds]) stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

function end(res: ServerResponse, status: number, reason: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(`${reason}\n`);
}
