/**
 * The shared pin store and counters against a real redis-server, hand-fed: hostile names stay data,
 * the file store's bounds hold, and the counters keep the sliding minute.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_PINNED_SERVERS } from "../../src/policy/pin-store.js";
import { RedisPinStore } from "../../src/state/redis-pins.js";
import { RedisRateLimiter } from "../../src/state/redis-rate-limiter.js";
import { AsyncRedis } from "../../src/state/async-redis.js";
import type { JudgedMessage } from "../../src/policy/judged-message.js";
import { redisAvailable, startRedis, type RedisServer } from "./redis-harness.js";

const haveRedis = redisAvailable();
if (!haveRedis) console.warn("SKIPPED test/state/redis-pins.test.ts: redis-server is not installed (scripts/ensure-test-deps.sh, run by npm test, installs it as root)");

const message = (session: string): JudgedMessage => ({ server: "s:1", host: "s", session, direction: "client_to_server", kind: "request", method: "tools/call", tool: "t", raw: undefined });

describe.skipIf(!haveRedis)("Redis-backed pins and counters", () => {
  let redis: RedisServer;
  let client: AsyncRedis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new AsyncRedis(redis.url);
    expect(await client.ready(5_000)).toBe(true);
  });
  afterAll(async () => {
    await client?.close();
    await redis?.stop();
  });

  it("keeps tools named __proto__ and constructor as data, and flags their change", async () => {
    const pins = new RedisPinStore(client, null);
    const now = new Date();
    const tools = [
      { name: "__proto__", sha256: "a".repeat(64) },
      { name: "constructor", sha256: "b".repeat(64) },
    ];
    expect(await pins.observe("evil:443", tools, now)).toEqual({ verdicts: ["first_use", "first_use"], notSaved: null });
    expect((await pins.observe("evil:443", [{ name: "__proto__", sha256: "c".repeat(64) }], now)).verdicts).toEqual(["changed"]);
    expect((await pins.tools("evil:443")).map(([name]) => name)).toEqual(["__proto__", "constructor"]);
    expect(({} as Record<string, unknown>).sha256).toBeUndefined();
    expect(await pins.approve("evil:443", ["__proto__"], now)).toEqual(["__proto__"]);
  });

  it("holds the file store's bound on servers", async () => {
    const pins = new RedisPinStore(client, null);
    const fill = Array.from({ length: MAX_PINNED_SERVERS }, (_, i) => `filler-${i}:443`);
    await client.call(["SADD", "mcp-wiretap:pins:servers", ...fill]);
    expect((await pins.observe("one-too-many:443", [{ name: "x", sha256: "d".repeat(64) }], new Date())).verdicts).toEqual(["store_full"]);
  });

  it("counts per session in one sliding minute, shared by every counter on the same Redis", async () => {
    const limit = { name: "two", perMinute: 2, per: "session" as const, action: "deny" as const, match: {} };
    const warn = () => undefined;
    const replicaA = new RedisRateLimiter(limit, client, true, Date.now, warn);
    const replicaB = new RedisRateLimiter(limit, client, true, Date.now, warn);
    expect([(await replicaA.check(message("x"))).over, (await replicaB.check(message("x"))).over, (await replicaA.check(message("x"))).over]).toEqual([false, false, true]);
    expect((await replicaB.check(message("y"))).over).toBe(false);
  });
});
