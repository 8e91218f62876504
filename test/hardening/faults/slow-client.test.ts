/**
 * A slow client under a fast upstream: backpressure must reach the upstream, so the proxy's memory stays
 * bounded however large the response. The proxy runs as its own process (the built CLI) so that its RSS
 * can be read from /proc.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTunnel, tlsThroughTunnel } from "../../helpers/proxy-harness.js";
import { waitUntil } from "../../helpers/wait-until.js";
import { MB, rssBytes, sleep, startCliProxy, startFaultUpstream, waitForLogRecord, type CliProxy, type FaultUpstream } from "./fault-kit.js";

const TOTAL = 200 * MB;
const PIECE = Buffer.alloc(64 * 1024, 0x61);
const SLOW_READ_MS = 4_000;

describe("a slow client reading a fast 200 MB response", () => {
  let proxy: CliProxy;
  let upstream: FaultUpstream;
  const produced = { bytes: 0, writeFalse: 0, ended: false, closedEarly: false };

  beforeAll(async () => {
    upstream = await startFaultUpstream((req, res) => {
      req.resume();
      if (req.url !== "/big") {
        res.end("ok");
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(TOTAL) });
      res.once("close", () => (produced.closedEarly = !res.writableFinished));
      const pump = (): void => {
        while (produced.bytes < TOTAL && !res.destroyed) {
          produced.bytes += PIECE.length;
          if (!res.write(PIECE)) {
            produced.writeFalse++;
            res.once("drain", pump);
            return;
          }
        }
        if (produced.bytes >= TOTAL && !res.destroyed) {
          produced.ended = true;
          res.end();
        }
      };
      pump();
    });
    proxy = await startCliProxy();
  });

  afterAll(async () => {
    await proxy?.dispose();
    await upstream?.close();
  });

  it("throttles the upstream and keeps the proxy's RSS growth under 64 MB", { timeout: 30_000 }, async () => {
    // Warm up (TLS both ways, leaf certificate, the upstream pool), then take the baseline.
    const warm = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    const warmTls = await tlsThroughTunnel(warm.socket, "127.0.0.1", proxy.caPem);
    warmTls.write(`GET /small HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\nConnection: close\r\n\r\n`);
    warmTls.resume();
    await new Promise((resolve) => warmTls.once("close", resolve));
    await sleep(200);
    const baseline = rssBytes(proxy.pid);

    const { socket } = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    const client = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    // Paused: nothing reads until the loop below takes what is buffered, every 100 ms.
    client.write(`GET /big HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\n\r\n`);
    let received = 0;
    let peak = baseline;
    const samples: { t: number; produced: number; rss: number }[] = [];
    const startedAt = Date.now();
    while (Date.now() - startedAt < SLOW_READ_MS) {
      await sleep(100);
      const chunk = client.read() as Buffer | null;
      received += chunk?.length ?? 0;
      const rss = rssBytes(proxy.pid);
      peak = Math.max(peak, rss);
      samples.push({ t: Date.now() - startedAt, produced: produced.bytes, rss });
    }
    const atHalf = samples.find((s) => s.t >= SLOW_READ_MS / 2)!;
    const atEnd = samples.at(-1)!;
    console.log(
      `[faults] slow client: baseline RSS ${(baseline / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB ` +
        `(+${((peak - baseline) / MB).toFixed(1)} MB); upstream produced ${(produced.bytes / MB).toFixed(1)} MB of ${TOTAL / MB} MB ` +
        `(${(atHalf.produced / MB).toFixed(1)} MB at ${atHalf.t} ms), write() returned false ${produced.writeFalse}×; ` +
        `client read ${(received / MB).toFixed(2)} MB`,
    );
    expect(produced.writeFalse).toBeGreaterThan(0);
    expect(produced.ended).toBe(false);
    // Throttled: it produced what the buffers on the way hold (a few MB), not the 200 MB it had,
    expect(produced.bytes).toBeLessThan(64 * MB);
    // and in the second half no more than the client took (plus slack for buffers still filling).
    expect(atEnd.produced - atHalf.produced).toBeLessThan(received + 8 * MB);
    expect(peak - baseline).toBeLessThan(64 * MB);

    socket.destroy();
    await waitUntil(() => produced.closedEarly && upstream.open === 0, { timeoutMs: 10_000, what: "the upstream response to be closed" });
    const record = await waitForLogRecord(proxy.logFile, (r) => r.event === "http" && r.path === "/big", { what: "the http record of /big" });
    expect(record).toMatchObject({ status: 200, error: { code: "client_aborted" } });
    expect(Number(record.responseBytes)).toBeLessThanOrEqual(produced.bytes);

    // It lives on.
    const after = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    const afterTls = await tlsThroughTunnel(after.socket, "127.0.0.1", proxy.caPem);
    let text = "";
    afterTls.on("data", (c: Buffer) => (text += c.toString()));
    afterTls.write(`GET /small HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => afterTls.once("close", resolve));
    expect(text).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\nok$/);
  });
});
