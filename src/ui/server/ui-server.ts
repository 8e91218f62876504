import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { loadAssets, SERVED_CSP, servedPage } from "./assets.js";
import { UiGuard } from "./guard.js";
import { ActionGuard } from "./action-guard.js";
import { parseRelease, type HeldActions } from "./held-actions.js";
import { MAX_REPLAY_BODY_BYTES, type ReplayActions } from "./replay-actions.js";
import { EvictionReport, type EvictionSink } from "../../bounds/evictions.js";
import type { RecordHistory } from "./record-history.js";
import { downloadHandler } from "./downloads.js";
import { answerPlain as end } from "./plain-answer.js";
import { tokenHandler } from "./token-endpoint.js";
import { TokenWorker } from "../../tokens/token-worker.js";

/** Live batches go out at most this often; the page redraws once per batch. */
const FEED_INTERVAL_MS = 100;
/** Lines per feed event; a client further behind catches up over several. */
const FEED_BATCH_LINES = 5_000;
/** Bytes a feed is sent per interval (1.3 MB/s: ahead of a proxy writing 1,000 records/s), so no feed holds the loop. */
const FEED_FLUSH_BYTES = 128 * 1024;
/** Live feeds at once (a person opens a few tabs); past it a new one takes the place of one that stopped reading, or of the oldest. */
export const MAX_FEEDS = 32;
/** A feed whose page has not read what it was sent for this long is dropped. */
export const FEED_STALL_MS = 10_000;
/** An edited message sent back from the page, at most. */
const MAX_ACTION_BYTES = 8 * 1024 * 1024;
/** SSE comment sent when idle, so that proxies and the browser keep the stream open. */
const KEEPALIVE_MS = 15_000;

export interface UiServerOptions {
  port: number;
  history: RecordHistory;
  /** What the page says it shows: "live" (a running proxy) or the files opened. */
  source: { kind: "live" | "files"; follow: boolean; description: string };
  /** How long a feed may go without reading before it is dropped (default FEED_STALL_MS). */
  feedStallMs?: number;
  /** Where dropped feeds are reported (`table_evicted`, table ui_feeds). */
  onEvicted?: EvictionSink;
  /** `--intercept`: the held messages this UI lists and releases (a UI of saved files has none: read-only). */
  intercept?: HeldActions;
  /** Replay and Edit and replay (`start --ui`, `run --ui`, `ui --allow-replay`); absent: read-only. */
  replay?: ReplayActions;
}

export interface FeedUsage {
  /** Feeds open now. */
  feeds: number;
  /** Bytes written to them that their sockets have not taken yet. */
  unsentBytes: number;
  /** Feeds dropped: their page stopped reading, or MAX_FEEDS were open when another page came. */
  dropped: number;
}

export interface RunningUi {
  port: number;
  /** The URL with the token, as printed in the banner. */
  url: string;
  feedUsage(): FeedUsage;
  /** Writes the feed drops still counted. */
  flushEvictions(): void;
  close(): Promise<void>;
}

interface Feed {
  res: ServerResponse;
  /** Since when its socket has not taken what was written (null: it keeps up). */
  waitingSince: number | null;
  drop(reason: "stalled" | "entries"): void;
  stop(): void;
}

/** Serves the web UI on 127.0.0.1 only (loopback: it shows decrypted traffic). */
export async function startUiServer(opts: UiServerOptions): Promise<RunningUi> {
  const assets = loadAssets();
  let guard: UiGuard | null = null;
  let actions: ActionGuard | null = null;
  const feeds = new Set<Feed>();
  const stallMs = opts.feedStallMs ?? FEED_STALL_MS;
  const evictions = new EvictionReport("ui_feeds", { maxEntries: MAX_FEEDS, maxBytes: MAX_FEEDS * FEED_FLUSH_BYTES }, opts.onEvicted ?? (() => undefined));
  let dropped = 0;
  const batches = new FeedBatches(opts.history);
  // Token counts (GET /api/tokens, the HTML page download) run in a thread of their own, never on this loop.
  const tokenWorker = new TokenWorker();
  const download = downloadHandler(opts.history, opts.source.description, tokenWorker.count);
  const tokens = tokenHandler(opts.history, tokenWorker.count);

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
    if (url.pathname.startsWith("/api/action/")) return action(req, res, url);
    if (req.method !== "GET" && req.method !== "HEAD") return end(res, 405, "method not allowed");
    if (url.pathname === "/") {
      if (guard.presentedInUrl(url)) {
        // Trade the token in the address bar for a cookie, then drop it from the URL.
        res.writeHead(303, { "Set-Cookie": guard.setCookieHeader(), Location: "/" });
        return void res.end();
      }
      return send(res, "text/html; charset=utf-8", servedPage(opts.intercept || opts.replay ? { token: guard.token, nonce: actions!.issue(), replay: opts.replay !== undefined } : undefined));
    }
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204);
      return void res.end();
    }
    if (url.pathname === "/app.js") return send(res, "text/javascript; charset=utf-8", assets.js);
    if (url.pathname === "/app.css") return send(res, "text/css; charset=utf-8", assets.css);
    if (url.pathname === "/api/info") return send(res, "application/json", JSON.stringify({ ...opts.source, intercept: opts.intercept !== undefined, replay: opts.replay !== undefined }));
    if (url.pathname === "/api/intercept") return send(res, "application/json", JSON.stringify({ held: opts.intercept?.list() ?? [] }));
    if (url.pathname === "/api/records") return records(res, url);
    if (url.pathname === "/api/feed") return feed(req, res, url);
    if (url.pathname.startsWith("/api/download/")) return download(res, url);
    if (url.pathname === "/api/tokens") return tokens(res, url);
    return end(res, 404, "not found");
  });

  /** State-changing requests: only a UI given something to act on has any, each checked by the action guard. */
  function action(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const refusal = actions!.check(req);
    if (refusal) {
      req.resume();
      return end(res, refusal.status, refusal.reason);
    }
    const replay = url.pathname === "/api/action/replay" ? "replay" : url.pathname === "/api/action/replay-check" ? "replay-check" : null;
    if (replay !== null && opts.replay) return replayAction(req, res, opts.replay, replay);
    const intercept = opts.intercept;
    if (url.pathname !== "/api/action/release" || !intercept) {
      req.resume();
      return end(res, 404, "no such action (a UI of saved logs is read-only)");
    }
    readJson(req, MAX_ACTION_BYTES).then(
      (text) => {
        if (text === null) return end(res, 413, "action body too large");
        const parsed = parseRelease(text);
        if (typeof parsed === "string") return end(res, 400, parsed);
        const done = intercept.release(parsed.hold, parsed.action, parsed.message);
        if (typeof done === "string") send(res, "application/json", JSON.stringify({ ok: false, error: done }), 422);
        else if (done) send(res, "application/json", JSON.stringify({ ok: true }));
        else send(res, "application/json", JSON.stringify({ ok: false, error: "no longer held (released already, or timed out)" }), 409);
      },
      () => end(res, 400, "action body not read"),
    );
  }

  function replayAction(req: IncomingMessage, res: ServerResponse, replay: ReplayActions, name: "replay" | "replay-check"): void {
    readJson(req, MAX_REPLAY_BODY_BYTES).then(
      async (text) => {
        if (text === null) return end(res, 413, "replay body too large");
        const answer = await replay.handle(name, text);
        send(res, "application/json", JSON.stringify(answer.body), answer.status);
      },
      () => end(res, 400, "action body not read"),
    ).catch(() => {
      if (!res.headersSent) end(res, 500, "the replay failed");
    });
  }

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
    if (feeds.size >= MAX_FEEDS) {
      // Room is made by a feed that stopped reading, else by the oldest: a new page always gets its feed
      // (a page pushed out reconnects, as EventSource does).
      const stalled = [...feeds].filter((f) => f.waitingSince !== null).sort((a, b) => a.waitingSince! - b.waitingSince!)[0];
      if (stalled) stalled.drop("stalled");
      else feeds.values().next().value!.drop("entries");
    }
    let cursor = Number(url.searchParams.get("from") ?? String(opts.history.end)) || 0;
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", Connection: "keep-alive" });
    res.write(": mcp-wiretap feed\n\n");
    let timer: NodeJS.Timeout | null = null;
    let stallTimer: NodeJS.Timeout | null = null;
    const flush = (): void => {
      timer = null;
      if (self.waitingSince !== null || res.destroyed) return;
      let budget = FEED_FLUSH_BYTES;
      while (cursor < opts.history.end && budget > 0) {
        const batch = batches.after(cursor, budget);
        cursor = batch.next;
        budget -= batch.text.length;
        if (!res.write(batch.text)) {
          // A slow page: nothing more until it drains; a page that never does is dropped.
          self.waitingSince = Date.now();
          stallTimer = setTimeout(() => self.drop("stalled"), stallMs);
          res.once("drain", () => {
            if (stallTimer) clearTimeout(stallTimer);
            self.waitingSince = null;
            schedule();
          });
          return;
        }
      }
      if (cursor < opts.history.end) schedule();
    };
    const schedule = (): void => {
      timer ??= setTimeout(flush, FEED_INTERVAL_MS);
    };
    const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
    const unsubscribe = opts.history.onAppend(schedule);
    const self: Feed = {
      res,
      waitingSince: null,
      stop: () => {
        unsubscribe();
        clearInterval(keepalive);
        if (timer) clearTimeout(timer);
        if (stallTimer) clearTimeout(stallTimer);
        feeds.delete(self);
        if (!res.destroyed) res.end();
      },
      drop: (reason) => {
        if (!feeds.has(self)) return;
        dropped++;
        evictions.evicted(reason, res.writableLength);
        self.stop();
        // What it was sent and never read goes with it.
        res.destroy();
      },
    };
    feeds.add(self);
    req.on("close", self.stop);
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
  actions = new ActionGuard(guard.token);
  const url = guard.url();
  return {
    port,
    url,
    feedUsage: () => ({ feeds: feeds.size, unsentBytes: [...feeds].reduce((n, f) => n + f.res.writableLength, 0), dropped }),
    flushEvictions: () => evictions.flush(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const f of [...feeds]) f.stop();
        void tokenWorker.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The feed events after a cursor, at most `maxBytes` of lines (one line at least). Feeds that keep up all
 * stand at the same cursor: the last event made is kept, so one serialization serves them all.
 */
class FeedBatches {
  private last: { cursor: number; maxBytes: number; end: number; batch: { text: string; next: number } } | null = null;

  constructor(private readonly history: RecordHistory) {}

  after(cursor: number, maxBytes: number): { text: string; next: number } {
    const last = this.last;
    if (last && last.cursor === cursor && last.maxBytes === maxBytes && last.end === this.history.end) return last.batch;
    const { from, lines } = this.history.slice(cursor, FEED_BATCH_LINES);
    let bytes = 0;
    let count = 0;
    while (count < lines.length && (count === 0 || bytes + lines[count]!.length <= maxBytes)) bytes += lines[count++]!.length;
    const kept = lines.slice(0, count);
    // Lines the history let go before this client read them: the page says how many it missed.
    // Lines go as JSON strings: one malformed line (a followed file can hold anything) costs only itself.
    const text = `data: {"from":${from},"skipped":${from - cursor},"lines":${JSON.stringify(kept)}}\n\n`;
    const batch = { text, next: from + kept.length };
    this.last = { cursor, maxBytes, end: this.history.end, batch };
    return batch;
  }
}

/** The body of a request, up to `max` bytes (null past it: the rest is not read). */
function readJson(req: IncomingMessage, max: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.removeAllListeners("data");
        req.resume();
        return resolve(null);
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function send(res: ServerResponse, type: string, body: string, status = 200): void {
  res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}
