/**
 * Monitor mode, Redis slow (900 ms away), a server that streams as fast as it can behind a counted call:
 * every event of its stream waits (its record behind the call's) until the call is counted. The proxy must
 * not buffer all that arrives meanwhile: past its byte budget per stream it stops reading the server, and
 * reads on once the call is counted. Nothing is dropped or reordered,
 * every message is recorded, and another client's call and `/healthz` are answered while the stream waits.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDelayingHop, type DelayingHop } from "../helpers/delaying-hop.js";
import { startTestProxy, type LogRecord, type TestProxy } from "../helpers/proxy-harness.js";
import { json, rpcResult, sseEvent, sseHead, startScriptedUpstream, type ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { sseData, wireClient, type WireClient } from "../policy/wire-client.js";
import { redisAvailable, startRedis, type RedisServer } from "./redis-harness.js";

const haveRedis = redisAvailable();
if (!haveRedis) console.warn("SKIPPED test/state/slow-redis-flood.test.ts: redis-server is not installed (scripts/ensure-test-deps.sh, run by npm test, installs it as root)");

const POLICY = `mode: monitor
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }
rateLimits:
  - name: slow-redis-flood-calls
    match: { method: tools/call, kind: request }
    perMinute: 100000
    per: global
`;

/** Under the proxy's deadline of 1 s (past it the call is decided without Redis: the stream then goes on too). */
const REDIS_DELAY_MS = 900;
/**
 * The proxy's budget per stream, shrunk (the default is 4 MiB): a loaded machine passes far less than the
 * default in the 900 ms the call waits, and the stream must pass its budget then, however slow the machine.
 */
const BUDGET = 256 * 1024;
const EVENTS = 768;
const PAD = "x".repeat(16 * 1024);
/** 12 MiB in all: far more than the budget. */
const STREAM_BYTES = EVENTS * PAD.length;
/** What one read of the server's stream may bring past the budget before the proxy stops reading. */
const READ_BYTES = 128 * 1024;
/** A write that waits this long for the proxy to read on: the proxy stopped reading. */
const STALL_MS = 250;

interface Flood {
  written: number;
  /** Bytes written when the first stall began (null: the server never had to wait). */
  writtenAtStall: number | null;
  done: Promise<void>;
}

describe.skipIf(!haveRedis)("monitor mode: a fast stream behind a call that waits for a slow Redis", () => {
  let redis: RedisServer;
  let hop: DelayingHop;
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  let dir: string;
  let flood: Flood | null = null;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-slow-redis-flood-"));
    writeFileSync(path.join(dir, "policy.yaml"), POLICY);
    redis = await startRedis();
    hop = await startDelayingHop({ host: "127.0.0.1", port: redis.port }, REDIS_DELAY_MS);
    up = await startScriptedUpstream();
    up.route("POST", "/flood", (req, res) => {
      const id = (req.json as { id: number }).id;
      const state: Flood = { written: 0, writtenAtStall: null, done: Promise.resolve() };
      flood = state;
      sseHead(res);
      state.done = (async () => {
        for (let n = 0; n < EVENTS; n++) {
          const event = sseEvent({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: { n, pad: PAD } } });
          state.written += event.length;
          if (res.write(event)) continue;
          const t0 = performance.now();
          await new Promise((resolve) => res.once("drain", resolve));
          if (state.writtenAtStall === null && performance.now() - t0 >= STALL_MS) state.writtenAtStall = state.written;
        }
        res.end(sseEvent(rpcResult(id, { content: [] })));
      })();
    });
    up.route("POST", "/other", (req, res) => json(res, rpcResult((req.json as { id: number }).id, { tools: [] })));
    proxy = await startTestProxy({ config: path.join(dir, "policy.yaml"), state: `redis://127.0.0.1:${hop.port}/0`, waitingBytes: { perStream: BUDGET, total: 16 * BUDGET } });
    client = wireClient(proxy);
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
    await hop?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stops reading the server past its budget, then passes on and records every event in order", async () => {
    const heap0 = process.memoryUsage().heapUsed;
    let heapPeak = heap0;
    const sampler = setInterval(() => (heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)), 10);
    // Another client, its tunnel open before the flood: what it asks while the stream is paused is one request.
    const other = wireClient(proxy);
    expect((await other.post(`${up.url}/other`, { jsonrpc: "2.0", id: 1, method: "tools/list" })).status).toBe(200);
    const call = client.post(`${up.url}/flood`, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "flood", arguments: {} } });
    // While the stream is paused (the call still waits for Redis): another client's call and the proxy's
    // health are answered. /healthz answering `paused: 1` after the other call says both came meanwhile.
    let pausedAfterOther: number | null = null;
    let otherMs = 0;
    try {
      for (let i = 0; i < 500 && (await waitingUsage(proxy)).paused === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const t0 = performance.now();
      const answer = await other.post(`${up.url}/other`, { jsonrpc: "2.0", id: 8, method: "tools/list" });
      otherMs = performance.now() - t0;
      expect({ status: answer.status, text: answer.text }).toMatchObject({ status: 200 });
      pausedAfterOther = (await waitingUsage(proxy)).paused;
    } finally {
      await other.close();
    }
    await flood!.done;
    clearInterval(sampler);
    const res = await call;
    console.log(
      `flood: ${(STREAM_BYTES / 2 ** 20).toFixed(0)} MiB streamed; server stalled after ${flood!.writtenAtStall === null ? "never" : `${(flood!.writtenAtStall / 2 ** 20).toFixed(1)} MiB`}; heap grew ${((heapPeak - heap0) / 2 ** 20).toFixed(1)} MiB at most while it streamed; ${((await waitingUsage(proxy)).peakStream / 2 ** 10).toFixed(0)} KiB waited in the stream at most; another call took ${otherMs.toFixed(0)} ms meanwhile`,
    );
    expect(pausedAfterOther).toBe(1);
    // Every event reached the client, in the server's order, and nothing else.
    const data = sseData(res.text) as { id?: number; params?: { data: { n: number } } }[];
    expect(data.length).toBe(EVENTS + 1);
    expect(data.slice(0, EVENTS).every((m, i) => m.params?.data.n === i)).toBe(true);
    expect(data[EVENTS]!.id).toBe(7);
    // Every message recorded, in order: the call, each event, the answer.
    const records = await proxy.waitForRecords((r: LogRecord) => r.event === "rpc" && r.path === "/flood", EVENTS + 2, { timeoutMs: 20_000 });
    expect(records.map((r) => `${r.direction} ${r.kind}`)).toEqual([
      "client_to_server request",
      ...Array.from({ length: EVENTS }, () => "server_to_client notification"),
      "server_to_client response",
    ]);
    expect(records.slice(1, -1).every((r, i) => (r.params as { data?: { n?: number } } | undefined)?.data?.n === i)).toBe(true);
    // What waited behind the call never passed its budget by more than one read.
    const waiting = await waitingUsage(proxy);
    expect(waiting.peakStream).toBeGreaterThan(BUDGET / 2);
    expect(waiting.peakStream).toBeLessThanOrEqual(BUDGET + READ_BYTES);
    expect(waiting.pauses).toBeGreaterThan(0);
    expect(waiting.used).toBe(0);
    expect(waiting.paused).toBe(0);
  }, 60_000);
});

/** What `/healthz` says waits behind judgements. */
async function waitingUsage(proxy: TestProxy): Promise<{ used: number; peakStream: number; pauses: number; paused: number }> {
  const health = (await (await fetch(`${proxy.url}/healthz`)).json()) as { waitingMemory: { used: number; peakStream: number; pauses: number; paused: number } };
  return health.waitingMemory;
}
