/**
 * A Redis that stops answering (hung, not gone: its connection stays open): every call fails at its own
 * deadline, and what the client keeps for it does not grow with the calls made during the outage. Redis
 * answers in order, so a command sent on a connection that no longer answers stays queued on it until the
 * connection is dropped: the bytes sent to the silent server are what is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AsyncRedis } from "../../src/state/async-redis.js";
import { startDelayingHop, type DelayingHop } from "../helpers/delaying-hop.js";
import { redisAvailable, startRedis, type RedisServer } from "./redis-harness.js";

const haveRedis = redisAvailable();
if (!haveRedis) console.warn("SKIPPED test/state/async-redis.test.ts: redis-server is not installed (scripts/ensure-test-deps.sh, run by npm test, installs it as root)");

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!haveRedis)("a Redis that stops answering", () => {
  let redis: RedisServer;
  let hop: DelayingHop;
  let client: AsyncRedis;
  beforeAll(async () => {
    redis = await startRedis();
    hop = await startDelayingHop({ host: "127.0.0.1", port: redis.port }, 0);
    client = new AsyncRedis(`redis://127.0.0.1:${hop.port}/0`, { timeoutMs: 100, backoffMs: 50 });
    expect(await client.ready(5_000)).toBe(true);
  });
  afterAll(async () => {
    await client?.close();
    await hop?.close();
    await redis?.stop();
  });

  it("calls made during the outage fail, and are not kept waiting on the silent connection", async () => {
    hop.silence();
    const round = () => Promise.allSettled(Array.from({ length: 20 }, () => client.call(["INCR", "async-redis-outage"])));
    expect((await round()).every((r) => r.status === "rejected")).toBe(true);
    const afterFirst = hop.unansweredBytes();
    expect(afterFirst).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) {
      await sleep(80);
      expect((await round()).every((r) => r.status === "rejected")).toBe(true);
    }
    // At most a reconnection's handshake more: none of the 100 later calls is queued on a server that never answers.
    expect(hop.unansweredBytes() - afterFirst).toBeLessThan(200);
  });

  it("one answer late past its deadline: the connection is made anew, and later calls are answered again", async () => {
    const direct = new AsyncRedis(redis.url, { timeoutMs: 100, backoffMs: 50 });
    try {
      expect(await direct.ready(5_000)).toBe(true);
      // Blocks this connection for 300 ms: an answer that comes after its deadline.
      const late = direct.call(["BLPOP", "async-redis-nothing", "0.3"]);
      await sleep(50);
      // Queued behind it, and failed when the connection is dropped: the reason is the late answer.
      const behind = direct.call(["INCR", "async-redis-behind"]);
      await expect(late).rejects.toThrow(/no answer within 100 ms/);
      await expect(behind).rejects.toThrow(/no answer within 100 ms/);
      expect(await direct.ready(5_000)).toBe(true);
      expect(await direct.call(["INCR", "async-redis-after"])).toBeTypeOf("number");
    } finally {
      await direct.close();
    }
  });
});
