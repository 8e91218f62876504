/**
 * Rate limits against a flood of fresh keys: fake session ids must not evict (and so reset) the
 * count of a session still within its minute; the table stays bounded; overflow is limited and reported.
 */
import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/policy/rate-limiter.js";
import { fakeClock, policyFrom, toolCall } from "./policy-fixtures.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";
import { MiB, retainedBy } from "../helpers/retained-memory.js";

const QUIET = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }\n";
const SERVER = "mcp.example.com:443";

function limited(perMinute: number, warnings: unknown[] = []) {
  const clock = fakeClock();
  const policy = policyFrom(`mode: enforce\n${QUIET}rateLimits:\n  - { name: calls, match: { method: tools/call }, perMinute: ${perMinute}, per: session }\n`, {
    now: clock.now,
    warn: (w) => warnings.push(w),
  });
  return { clock, policy };
}

describe("rate limits under a flood of fresh session ids", () => {
  it("10,000 calls with fake session ids do not reset the real session's count: its 6th call in the minute is still denied", () => {
    const { clock, policy } = limited(5);
    const real = { server: SERVER, session: "real-session" };
    for (let i = 0; i < 5; i++) expect(policy.judge(toolCall("echo", {}, real)).action).toBe("allow");
    for (let i = 0; i < 10_000; i++) policy.judge(toolCall("echo", {}, { server: SERVER, session: `fake-${i}` }));
    clock.advance(30_000);
    expect(policy.judge(toolCall("echo", {}, real)).action).toBe("deny");
  });

  it("5,000 fresh session ids of 15 KB each: the budgets' table holds their digests, not the ids", async () => {
    const { policy } = limited(5);
    const retained = await retainedBy(() => {
      for (let i = 0; i < 5_000; i++) policy.judge(toolCall("echo", {}, { server: SERVER, session: Buffer.alloc(15_000, `${i % 10}abc`).toString("latin1") + i }));
    });
    // Keyed by the ids themselves: 75 MB held.
    expect(retained).toBeLessThan(16 * MiB);
    const long = { server: SERVER, session: `${"L".repeat(20_000)}-1` };
    for (let i = 0; i < 5; i++) expect(policy.judge(toolCall("echo", {}, long)).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, long)).action).toBe("deny");
  });

  it("a table full of active keys: new keys share one overflow budget under the same limit (enforced), reported once per 10 s", () => {
    const warnings: { event?: string; limit?: string; message?: string }[] = [];
    const { clock, policy } = limited(5, warnings);
    const fresh = (i: number) => policy.judge(toolCall("echo", {}, { server: SERVER, session: `s-${i}` }));
    const actions: string[] = [];
    for (let i = 0; i < 20_000; i++) actions.push(fresh(i).action);
    // The first 10,000 keys are tracked, each within its budget; then 5 in the shared overflow budget, then denials.
    expect(actions.slice(0, 10_005).every((a) => a === "allow")).toBe(true);
    expect(actions.slice(10_005).every((a) => a === "deny")).toBe(true);
    const denied = fresh(30_000);
    expect(denied).toMatchObject({ action: "deny", enforced: true });
    expect(denied.rules[0]!.reason).toMatch(/^over 5 per minute \(per session; .*shared overflow budget/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ event: "rate_limit_overflow", limit: "calls" });
    clock.advance(5_000);
    fresh(30_001);
    expect(warnings).toHaveLength(1);
    clock.advance(5_000);
    fresh(30_002);
    expect(warnings).toHaveLength(2);
    // The limiter's warnings are written as they are, at warn.
    expectRecordsMatchSchemas(warnings.map((w) => ({ level: "warn", time: new Date(0).toISOString(), ...w })), "rate_limit_overflow");
    // A minute after the flood, its keys have expired: new sessions get their own budgets again.
    clock.advance(61_000);
    for (let i = 0; i < 5; i++) expect(fresh(40_000).action).toBe("allow");
    expect(fresh(40_000).action).toBe("deny");
    expect(fresh(40_001).action).toBe("allow");
  });

  it("memory is bounded: 200,000 distinct keys leave at most 10,000 tracked, whatever the limit", () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ name: "calls", match: {}, perMinute: 100_000, action: "deny", per: "session" }, clock.now);
    const m = (session: string) => ({ server: SERVER, host: "mcp.example.com", session, direction: "client_to_server" as const, kind: "request" as const, method: "tools/call", tool: "echo", raw: {} });
    for (let i = 0; i < 200_000; i++) {
      if (i % 1_000 === 0) clock.advance(100);
      limiter.hit(m(`flood-${i}`));
    }
    expect(limiter.trackedKeys).toBeLessThanOrEqual(10_000);
    // The real session, counted many times: one budget's memory does not grow with its count.
    for (let i = 0; i < 50_000; i++) limiter.hit(m("busy"));
    expect(limiter.trackedKeys).toBeLessThanOrEqual(10_000);
  });
});
