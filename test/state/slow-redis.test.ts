/**
 * Shared state that is slow or hung costs only the messages that need it: two proxy processes reach a real
 * redis-server through a hop that delays every answer by 100 ms. Calls a rate limit counts wait about that
 * long, and only they: other calls and /healthz go on; the limit stays exact with calls in flight on both
 * replicas at once; and a Redis that stops answering gets each counted call denied after its own deadline.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startCliProxy, type CliProxy } from "../helpers/cli-proxy.js";
import { startDelayingHop, type DelayingHop } from "../helpers/delaying-hop.js";
import type { LogRecord } from "../helpers/proxy-harness.js";
import { redisAvailable, startRedis, type RedisServer } from "./redis-harness.js";

const haveRedis = redisAvailable();
if (!haveRedis) console.warn("SKIPPED test/state/slow-redis.test.ts: redis-server is not installed (scripts/ensure-test-deps.sh, run by npm test, installs it as root)");

const DELAY_MS = 100;

/** Enforce mode; `echo` calls counted in Redis (5 a minute in all), `get-sum` calls by a loose limit; pins off (tools/list never asks Redis). */
const POLICY = `mode: enforce
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }
rateLimits:
  - name: slow-redis-five-echoes
    match: { method: tools/call, tool: echo, kind: request }
    perMinute: 5
    per: global
  - name: slow-redis-sums
    match: { method: tools/call, tool: get-sum, kind: request }
    perMinute: 100000
    per: global
`;

type Connected = Awaited<ReturnType<typeof connectStreamable>>;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** What `read` returns once it holds `n` entries (records reach the log file a moment after the answers), or after 5 s. */
async function atLeast<T>(read: () => Promise<T[]>, n: number): Promise<T[]> {
  for (let i = 0; i < 50; i++) {
    const found = await read();
    if (found.length >= n) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return read();
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await run();
  return { ms: performance.now() - t0, value };
}

describe.skipIf(!haveRedis)("a Redis 100 ms away, then silent", () => {
  let redis: RedisServer;
  let hop: DelayingHop;
  let upstream: McpUpstream;
  let a: CliProxy;
  let b: CliProxy;
  let dir: string;
  const clients: Connected[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-slow-redis-"));
    const policy = path.join(dir, "policy.yaml");
    writeFileSync(policy, POLICY);
    redis = await startRedis();
    hop = await startDelayingHop({ host: "127.0.0.1", port: redis.port }, DELAY_MS);
    upstream = await startMcpUpstream();
    const state = `redis://127.0.0.1:${hop.port}/0`;
    [a, b] = await Promise.all([startCliProxy(["--config", policy, "--state", state]), startCliProxy(["--config", policy, "--state", state])]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all([a?.dispose(), b?.dispose()]);
    await upstream?.close();
    await hop?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function connect(via: CliProxy): Promise<Connected> {
    const c = await connectStreamable(upstream.streamableUrl, { proxyUrl: via.url, caPem: via.caPem });
    clients.push(c);
    return c;
  }

  const healthz = (via: CliProxy): Promise<number> => timed(async () => (await request(`${via.url}/healthz`)).body.text()).then((t) => t.ms);
  const sum = (c: Connected) => c.client.callTool({ name: "get-sum", arguments: { a: 1, b: 2 } });
  const records = async (via: CliProxy, tool: string): Promise<LogRecord[]> => (await via.records()).filter((r) => r.event === "rpc" && r.kind === "request" && r.tool === tool);

  it("counted calls wait about the round trip, and only they: other calls and /healthz stay fast", async () => {
    const counted = await Promise.all(Array.from({ length: 8 }, () => connect(a)));
    const other = await connect(a);
    const callMs: number[] = [];
    const until = performance.now() + 1_500;
    const load = counted.map(async (c) => {
      while (performance.now() < until) callMs.push((await timed(() => sum(c).catch(() => undefined))).ms);
    });
    const healthMs: number[] = [];
    const listMs: number[] = [];
    while (performance.now() < until) {
      healthMs.push(await healthz(a));
      listMs.push((await timed(() => other.client.listTools())).ms);
    }
    await Promise.all(load);
    // The counted calls did wait for Redis (each is recorded allowed: counted, not decided without it)…
    expect(median(callMs)).toBeGreaterThanOrEqual(DELAY_MS);
    const sums = await atLeast(() => records(a, "get-sum"), callMs.length);
    expect(sums.length).toBeGreaterThanOrEqual(callMs.length);
    expect(sums.every((r) => (r.decision as { action: string }).action === "allow")).toBe(true);
    // …while eight of them were always waiting, the rest of the proxy was not (a proxy that waited for Redis
    // in turn would answer these after several round trips, later than the counted calls themselves).
    expect(median(healthMs)).toBeLessThan(DELAY_MS);
    expect(median(listMs)).toBeLessThan(median(callMs) - DELAY_MS / 2);
  }, 30_000);

  it("a limit of 5 stays exact with 8 calls in flight on both replicas at once", async () => {
    const callers = await Promise.all([a, b, a, b, a, b, a, b].map((via) => connect(via)));
    await Promise.all(callers.map((c) => c.client.callTool({ name: "echo", arguments: { message: "x" } }).catch(() => undefined)));
    const echoes = await atLeast(async () => [...(await records(a, "echo")), ...(await records(b, "echo"))], 8);
    expect(echoes).toHaveLength(8);
    const actions = echoes.map((r) => (r.decision as { action: string }).action).sort();
    expect(actions).toEqual(["allow", "allow", "allow", "allow", "allow", "deny", "deny", "deny"]);
  }, 30_000);

  it("a Redis that stops answering: each counted call is denied after its own deadline, the proxy keeps serving", async () => {
    const counted = await Promise.all([connect(b), connect(b), connect(b)]);
    const other = await connect(b);
    hop.silence();
    const calls = counted.map((c) => timed(() => sum(c).then((v) => JSON.stringify(v), (err: Error) => err.message)));
    const healthMs: number[] = [];
    for (let i = 0; i < 5; i++) healthMs.push(await healthz(b));
    const list = await timed(() => other.client.listTools());
    const answers = await Promise.all(calls);
    // Fail closed: enforce mode cannot count them, so it denies them, each within about the deadline.
    for (const { value, ms } of answers) {
      expect(value).toMatch(/blocked by mcp-wiretap policy/);
      expect(ms).toBeLessThan(3_000);
    }
    const denied = async (): Promise<LogRecord[]> => (await records(b, "get-sum")).filter((r) => (r.decision as { action: string }).action === "deny");
    const deniedRecords = await atLeast(denied, 3);
    expect(deniedRecords).toHaveLength(3);
    for (const r of deniedRecords) {
      expect((r.decision as { rules: { reason: string }[] }).rules[0]!.reason).toMatch(/^shared rate-limit counters unreachable \(no answer within 1000 ms\): denied, enforce mode fails closed$/);
    }
    expect(Math.max(...healthMs)).toBeLessThan(DELAY_MS);
    expect(list.ms).toBeLessThan(1_000);
    await b.waitForRecord((r) => r.event === "state_unavailable", "a state_unavailable warning");
  }, 30_000);
});
