/**
 * A message whose judgement waits for shared state (src/state/) holds only itself and what follows it on its
 * own stream: the pipeline returns a promise for it and for every later message of that exchange, writes
 * their records in the order they came once it is answered, and goes on at once with other exchanges.
 * The counter here is the policy's real seam for shared state, answered by hand.
 */
import { describe, expect, it } from "vitest";
import type { RateLimit } from "../../src/policy/config.js";
import type { RateLimitCounter, RateLimitVerdict } from "../../src/policy/rate-limiter.js";
import { createPolicy } from "../../src/policy/create-policy.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import type { TrackedContext } from "../../src/mcp/tracker.js";
import { recordingPipeline } from "./pipeline-fixtures.js";

const policyText = (mode: "enforce" | "monitor"): string => `mode: ${mode}
rateLimits:
  - name: shared
    match: { method: tools/call, tool: slow, kind: request }
    perMinute: 10
    per: global
`;

/** A counter whose every answer is given by the test (as Redis would, later). */
function handAnswered(): { counter: (limit: RateLimit) => RateLimitCounter; answer(v: RateLimitVerdict | Error): void; asked: () => number } {
  const waiting: ((v: RateLimitVerdict | Error) => void)[] = [];
  let asked = 0;
  return {
    counter: (limit) => ({
      limit,
      check: () => {
        asked++;
        return new Promise<RateLimitVerdict>((resolve, reject) => waiting.push((v) => (v instanceof Error ? reject(v) : resolve(v))));
      },
    }),
    answer: (v) => waiting.shift()!(v),
    asked: () => asked,
  };
}

function setup(mode: "enforce" | "monitor") {
  const shared = handAnswered();
  const policy = createPolicy(parsePolicy(policyText(mode), "test.yaml"), { pins: null, rateLimiter: shared.counter });
  const { pipeline, records } = recordingPipeline(policy, { payloads: { payloads: "none", maxPayloadBytes: 0 } });
  const ctx = (flow: string): TrackedContext => ({ flow, transport: "streamable-http", server: "s:443", path: "/mcp", session: "s1", protocolVersion: "2025-06-18", direction: "client_to_server", scope: flow });
  const call = (flow: string, id: number, tool: string) => pipeline.message(ctx(flow), { jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: {} } }, 60);
  const ids = (): unknown[] => records.filter((r) => r.event === "rpc").map((r) => r.id);
  return { shared, pipeline, records, call, ids };
}

describe("a judgement that waits for shared state", () => {
  it("holds its own exchange in order and nothing else", async () => {
    const { shared, pipeline, call, ids } = setup("monitor");
    const first = call("exchange-a", 1, "slow");
    const second = call("exchange-a", 2, "fast");
    const other = call("exchange-b", 3, "fast");
    expect(first).toBeInstanceOf(Promise);
    // Not counted itself, but behind one that waits: its record may not overtake.
    expect(second).toBeInstanceOf(Promise);
    // Another exchange is judged and recorded at once.
    expect(other).not.toBeInstanceOf(Promise);
    expect(ids()).toEqual([3]);
    expect(pipeline.waitingStreams).toBe(1);
    shared.answer({ over: false, overflow: false });
    expect((await first).decision.action).toBe("allow");
    expect((await second).decision.action).toBe("allow");
    expect(ids()).toEqual([3, 1, 2]);
    expect(pipeline.waitingStreams).toBe(0);
    // The stream waits no more: the next uncounted message is judged at once again.
    expect(call("exchange-a", 4, "fast")).not.toBeInstanceOf(Promise);
  });

  it("enforce mode: the answer decides the message; messages after it keep their own decisions", async () => {
    const { shared, call, records } = setup("enforce");
    const first = call("x", 1, "slow");
    const second = call("x", 2, "fast");
    shared.answer({ over: true, overflow: false, reason: "shared rate-limit counters unreachable (no answer within 1000 ms): denied, enforce mode fails closed" });
    expect((await first).decision).toMatchObject({ action: "deny", enforced: true, effect: "not forwarded; the client got a policy error" });
    expect((await second).decision).toMatchObject({ action: "allow", enforced: false });
    expect(records.map((r) => (r.decision as { action: string }).action)).toEqual(["deny", "allow"]);
  });

  it("monitor mode: a message counted without the shared counters is flagged, saying so", async () => {
    const { shared, call } = setup("monitor");
    const first = call("x", 1, "slow");
    shared.answer({ over: false, overflow: false, unshared: "shared rate-limit counters unreachable (connect ECONNREFUSED): counted in this replica alone" });
    expect((await first).decision).toEqual({
      action: "flag",
      enforced: false,
      rules: [{ name: "shared", action: "flag", reason: "shared rate-limit counters unreachable (connect ECONNREFUSED): counted in this replica alone" }],
    });
  });

  it("a wait that fails is a failed judgement (enforce mode denies), and the stream goes on", async () => {
    const { shared, call, ids } = setup("enforce");
    const first = call("x", 1, "slow");
    const second = call("x", 2, "fast");
    shared.answer(new Error("counter broke"));
    expect((await first).decision).toMatchObject({ action: "deny", enforced: true, rules: [{ name: "judgement-failed" }] });
    expect((await second).decision.action).toBe("allow");
    expect(ids()).toEqual([1, 2]);
    expect(shared.asked()).toBe(1);
  });
});
