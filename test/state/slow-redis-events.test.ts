/**
 * Enforce mode, an event stream whose notifications a shared rate limit counts, Redis 100 ms away: each
 * counted event waits for its count, and the stream keeps its order behind it. The client reads what was
 * judged, in the order the server sent it: the first progress notification, not the second (over the
 * limit of one), a comment, then the result; the records say the same, in the same order.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDelayingHop, type DelayingHop } from "../helpers/delaying-hop.js";
import { startTestProxy, type LogRecord, type TestProxy } from "../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { scriptMcp, type ScriptedMcp } from "../policy/scripted-server.js";
import { wireClient, type WireClient } from "../policy/wire-client.js";
import { redisAvailable, startRedis, type RedisServer } from "./redis-harness.js";

const haveRedis = redisAvailable();
if (!haveRedis) console.warn("SKIPPED test/state/slow-redis-events.test.ts: redis-server is not installed (scripts/ensure-test-deps.sh, run by npm test, installs it as root)");

const POLICY = `mode: enforce
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }
rateLimits:
  - name: slow-redis-one-progress
    match: { method: notifications/progress, kind: notification }
    perMinute: 1
    per: global
`;

/** Monitor mode: every tools/call counted in Redis. */
const MONITOR_POLICY = `mode: monitor
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }
rateLimits:
  - name: slow-redis-monitor-calls
    match: { method: tools/call, kind: request }
    perMinute: 100000
    per: global
`;

const progress = (n: number): string => `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: n } })}\n\n`;

describe.skipIf(!haveRedis)("an event stream whose events wait for a Redis 100 ms away (enforce mode)", () => {
  let redis: RedisServer;
  let hop: DelayingHop;
  let up: ScriptedUpstream;
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let monitor: TestProxy;
  let monitorClient: WireClient;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-slow-redis-events-"));
    writeFileSync(path.join(dir, "policy.yaml"), POLICY);
    redis = await startRedis();
    hop = await startDelayingHop({ host: "127.0.0.1", port: redis.port }, 100);
    up = await startScriptedUpstream();
    mcp = scriptMcp(up);
    proxy = await startTestProxy({ config: path.join(dir, "policy.yaml"), state: `redis://127.0.0.1:${hop.port}/0` });
    client = wireClient(proxy);
    writeFileSync(path.join(dir, "monitor.yaml"), MONITOR_POLICY);
    monitor = await startTestProxy({ config: path.join(dir, "monitor.yaml"), state: `redis://127.0.0.1:${hop.port}/0` });
    monitorClient = wireClient(monitor);
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await monitorClient?.close();
    await proxy?.stop();
    await monitor?.stop();
    await up?.close();
    await hop?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("passes on what was judged, in the server's order: progress 1, the result; progress 2 (over the limit) dropped", async () => {
    const result = (id: unknown): string => `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: "done" }] } })}\n\n`;
    mcp.setScript((m) => ({ kind: "raw", body: Buffer.from(progress(1) + progress(2) + ": keep-alive\n\n" + result(m.id)), headers: { "content-type": "text/event-stream" } }));
    const t0 = performance.now();
    const res = await client.post(`${up.url}/mcp`, { jsonrpc: "2.0", id: 41, method: "tools/call", params: { name: "lookup", arguments: {}, _meta: { progressToken: "t" } } });
    // The counted events waited for Redis (and the result behind them).
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);
    const messages = res.text
      .split(/\n\n/)
      .map((e) => /^data: (.*)$/m.exec(e)?.[1])
      .filter((d) => d !== undefined)
      .map((d) => JSON.parse(d) as { method?: string; id?: number; params?: { progress: number } });
    expect(messages.map((m) => (m.method ? `progress ${m.params!.progress}` : `result ${m.id}`))).toEqual(["progress 1", "result 41"]);
    // An event that needs no judgement (a comment) waits its turn too.
    const keepAlive = res.text.indexOf(": keep-alive");
    expect(keepAlive).toBeGreaterThan(res.text.indexOf('"progress":1'));
    expect(keepAlive).toBeLessThan(res.text.indexOf('"id":41'));
    const records = await proxy.waitForRecords((r: LogRecord) => r.event === "rpc" && r.direction === "server_to_client", 3);
    expect(records.map((r) => [r.kind, (r.decision as { action: string }).action])).toEqual([
      ["notification", "allow"],
      ["notification", "deny"],
      ["response", "allow"],
    ]);
  }, 30_000);

  it("monitor mode: a counted call is recorded once counted, and no record of its exchange keeps its secret", async () => {
    // An opaque value under a secret member's name: only its record knows it is one.
    const secret = "vq8Rt2/Xn5+Kb1=Wm";
    // A server that repeats the value it was sent in a debug header: the http record keeps response headers.
    up.route("POST", "/echo-mcp", (req, res) => {
      const sent = (req.json as { params: { arguments: { api_key: string } } }).params.arguments.api_key;
      const body = JSON.stringify({ jsonrpc: "2.0", id: 42, result: { content: [] } });
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "x-debug": `received ${sent}` });
      res.end(body);
    });
    const res = await monitorClient.post(`${up.url}/echo-mcp`, { jsonrpc: "2.0", id: 42, method: "tools/call", params: { name: "save", arguments: { api_key: secret } } });
    expect(res.status).toBe(200);
    const http = await monitor.waitForRecord((r: LogRecord) => r.event === "http" && r.path === "/echo-mcp", { what: "the http record" });
    const rpc = await monitor.waitForRecord((r: LogRecord) => r.event === "rpc" && r.id === 42 && r.kind === "request", { what: "the call's record" });
    expect(rpc.decision).toEqual({ action: "allow", enforced: false, rules: [] });
    expect(JSON.stringify(rpc)).not.toContain(secret);
    expect(JSON.stringify(http)).not.toContain(secret);
  }, 30_000);
});
