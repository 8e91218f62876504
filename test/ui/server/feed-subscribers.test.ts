/**
 * Live-UI feeds that never read (issue: "one hostile peer, a bounded cost"): 300 token holders opened the
 * feed and read nothing; each feed held a batch of records it could not send, +140 MB, and the proxy's
 * traffic fell from 1,330 to 511 requests/s. A feed that does not read is dropped and counted; what the
 * others hold is bounded; a page that reads still gets its records.
 */
import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { TableEvictedRecord } from "../../../src/bounds/evictions.js";
import { RecordHistory } from "../../../src/ui/server/record-history.js";
import { MAX_FEEDS, startUiServer, type RunningUi } from "../../../src/ui/server/ui-server.js";
import { MiB, retainedBy } from "../../helpers/retained-memory.js";
import { waitUntil } from "../../helpers/wait-until.js";

let ui: RunningUi | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await ui?.close();
  ui = undefined;
});

const line = (i: number): string => JSON.stringify({ level: "info", time: "2026-11-28T00:00:00.000Z", event: "rpc", i, pad: "x".repeat(60) });

/** A feed request that is never read: the socket is paused once the request is sent. */
function silentFeed(url: URL): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), "127.0.0.1", () => {
      socket.write(`GET /api/feed?from=0 HTTP/1.1\r\nHost: 127.0.0.1:${url.port}\r\nCookie: mcp_wiretap_ui_${url.port}=${url.searchParams.get("token")}\r\n\r\n`, () => resolve());
      socket.pause();
    });
    socket.on("error", () => undefined);
    socket.once("error", reject);
    sockets.push(socket);
  });
}

/** A page that reads its feed: the `data:` events' lines, as they come. */
function readingFeed(url: URL, got: string[]): http.ClientRequest {
  return http.get(`http://127.0.0.1:${url.port}/api/feed`, { headers: { Cookie: `mcp_wiretap_ui_${url.port}=${url.searchParams.get("token")}` } }, (res) => {
    let text = "";
    res.on("data", (c: Buffer) => {
      text += c.toString();
      for (let end = text.indexOf("\n\n"); end !== -1; end = text.indexOf("\n\n")) {
        const event = text.slice(0, end);
        text = text.slice(end + 2);
        if (event.startsWith("data: ")) got.push(...(JSON.parse(event.slice(6)) as { lines: string[] }).lines);
      }
    });
  });
}

describe("live UI feeds that never read", () => {
  it("300 subscribers that never read: dropped and counted, what the feeds hold bounded, a reading page still fed", async () => {
    const history = new RecordHistory();
    // 4 MB: more than the kernel takes for a socket nobody reads.
    for (let i = 0; i < 36_000; i++) history.append(line(i));
    const evicted: TableEvictedRecord[] = [];
    ui = await startUiServer({ port: 0, history, source: { kind: "live", follow: true, description: "test" }, feedStallMs: 300, onEvicted: (r) => evicted.push(r) });
    const url = new URL(ui.url);
    const retained = await retainedBy(async () => {
      for (let i = 0; i < 300; i += 50) await Promise.all(Array.from({ length: 50 }, () => silentFeed(url)));
      // Every feed had its chance to write (a batch each 100 ms) and to stall.
      await new Promise((r) => setTimeout(r, 1_500));
    });
    // Each silent feed held a batch it could not send (~300 KB past what the kernel took).
    expect(retained).toBeLessThan(40 * MiB);

    const got: string[] = [];
    const page = readingFeed(url, got);
    try {
      await new Promise((r) => setTimeout(r, 300));
      history.append(line(-1));
      await waitUntil(() => got.some((l) => l.includes('"i":-1')), { timeoutMs: 3_000, what: "the new record on the reading page" });
    } finally {
      page.destroy();
    }
    const usage = ui.feedUsage();
    expect(usage.feeds).toBeLessThanOrEqual(MAX_FEEDS);
    expect(usage.dropped).toBeGreaterThanOrEqual(300 - MAX_FEEDS);
    expect(usage.unsentBytes).toBeLessThanOrEqual(16 * MiB);
    // The silent subscribers see their feed closed once they read again.
    let closed = 0;
    for (const s of sockets) {
      s.on("close", () => closed++);
      s.resume();
    }
    await waitUntil(() => closed >= 300 - MAX_FEEDS, { timeoutMs: 5_000, what: "the dropped feeds closed" });
    ui.flushEvictions();
    expect(evicted.reduce((n, r) => n + r.evicted, 0)).toBe(usage.dropped);
    expect(evicted.map((r) => r.table)).toEqual(evicted.map(() => "ui_feeds"));
  });
});
