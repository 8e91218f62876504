/**
 * Rate limits on a fake clock: a sliding one-minute window per session, per server or global.
 */
import { describe, expect, it } from "vitest";
import { fakeClock, firing, notification, policyFrom, request, response, rpcEvent, toolCall } from "./policy-fixtures.js";

const QUIET = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }\n";

function limited(per: "session" | "server" | "global", perMinute: number, action = "deny") {
  const clock = fakeClock();
  const policy = policyFrom(
    `mode: enforce\n${QUIET}rateLimits:\n  - { name: calls, match: { method: tools/call }, perMinute: ${perMinute}, action: ${action}, per: ${per} }\n`,
    { now: clock.now },
  );
  return { clock, policy };
}

describe("rate limits", () => {
  it("120/min: the first 120 pass, the 121st is denied with the limit named; it recovers as the window slides", () => {
    const { clock, policy } = limited("session", 120);
    // 120 calls spread over 59 s, two a second.
    for (let i = 0; i < 120; i++) {
      if (i > 0 && i % 2 === 0) clock.advance(1_000);
      expect(policy.judge(toolCall("echo")).action, `call ${i + 1}`).toBe("allow");
    }
    const over = policy.judge(toolCall("echo"));
    expect(over).toEqual({
      action: "deny",
      enforced: true,
      rules: [{ name: "calls", action: "deny", reason: "over 120 per minute (per session)" }],
    });
    // Denied calls do not count against the budget: still denied, not worse.
    expect(policy.judge(toolCall("echo")).action).toBe("deny");
    // Other methods are not limited.
    expect(policy.judge(request("tools/list")).action).toBe("allow");
    // Now at t0+60 s: the first two calls (at t0) have left the window.
    clock.advance(1_000);
    expect(policy.judge(toolCall("echo")).action).toBe("allow");
    expect(policy.judge(toolCall("echo")).action).toBe("allow");
    expect(policy.judge(toolCall("echo")).action).toBe("deny");
    // A whole quiet minute later: a fresh budget.
    clock.advance(60_000);
    for (let i = 0; i < 120; i++) expect(policy.judge(toolCall("echo")).action).toBe("allow");
    expect(policy.judge(toolCall("echo")).action).toBe("deny");
  });

  it("per session: each session of a server has its own budget", () => {
    const { policy } = limited("session", 2);
    const a = { server: "a.example:443", session: "s-a" };
    const b = { server: "a.example:443", session: "s-b" };
    expect(policy.judge(toolCall("echo", {}, a)).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, a)).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, a)).action).toBe("deny");
    expect(policy.judge(toolCall("echo", {}, b)).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, b)).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, b)).action).toBe("deny");
    // The same session id on another server is another budget.
    expect(policy.judge(toolCall("echo", {}, { server: "b.example:443", session: "s-a" })).action).toBe("allow");
  });

  it("per server: sessions of one server share a budget; other servers do not", () => {
    const { policy } = limited("server", 2);
    expect(policy.judge(toolCall("echo", {}, { server: "a.example:443", session: "1" })).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, { server: "a.example:443", session: "2" })).action).toBe("allow");
    const third = policy.judge(toolCall("echo", {}, { server: "a.example:443", session: "3" }));
    expect(third.action).toBe("deny");
    expect(third.rules[0]!.reason).toBe("over 2 per minute (per server)");
    expect(policy.judge(toolCall("echo", {}, { server: "b.example:443", session: "1" })).action).toBe("allow");
  });

  it("global: one budget for everything", () => {
    const { policy, clock } = limited("global", 2);
    expect(policy.judge(toolCall("echo", {}, { server: "a.example:443", session: "1" })).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, { server: "b.example:443", session: null })).action).toBe("allow");
    expect(policy.judge(toolCall("echo", {}, { server: "c.example:443", session: "9" })).action).toBe("deny");
    clock.advance(60_000);
    expect(policy.judge(toolCall("echo", {}, { server: "c.example:443", session: "9" })).action).toBe("allow");
  });

  it("action flag: over the limit is flagged, never denied", () => {
    const { policy } = limited("session", 1, "flag");
    expect(policy.judge(toolCall("echo")).action).toBe("allow");
    const d = policy.judge(toolCall("echo"));
    expect(d).toMatchObject({ action: "flag", enforced: false });
    expect(firing(d)).toEqual(["calls"]);
  });

  it("counts the messages a call starts with, not its answers: the README's rule allows perMinute calls, and never denies an answer", () => {
    const { policy } = limited("session", 2);
    for (let i = 0; i < 2; i++) {
      expect(policy.judge(toolCall("echo")).action).toBe("allow");
      expect(policy.judge(response("tools/call", { content: [] })).action).toBe("allow");
      expect(policy.judge(rpcEvent({ jsonrpc: "2.0", id: 99, error: { code: -1, message: "x" } }, { method: "tools/call" })).action).toBe("allow");
    }
    expect(policy.judge(toolCall("echo")).action).toBe("deny");
    // The answer of a call that ran is never denied, even with the budget spent.
    expect(policy.judge(response("tools/call", { content: [] }))).toEqual({ action: "allow", enforced: false, rules: [] });
  });

  it("counts requests in either direction and notifications; a match naming kind or direction counts what it names, and an answer over it is flagged, not denied", () => {
    const clock = fakeClock();
    const policy = policyFrom(
      `mode: enforce\n${QUIET}rateLimits:\n` +
        "  - { name: sampling, match: { method: sampling/createMessage }, perMinute: 1 }\n" +
        "  - { name: progress, match: { method: notifications/progress }, perMinute: 1 }\n" +
        "  - { name: answers, match: { method: tools/list, kind: response }, perMinute: 1 }\n",
      { now: clock.now },
    );
    const sampling = () => request("sampling/createMessage", {}, { direction: "server_to_client" });
    expect(policy.judge(sampling()).action).toBe("allow");
    expect(policy.judge(sampling()).action).toBe("deny");
    expect(policy.judge(notification("notifications/progress", { progressToken: 1, progress: 1 })).action).toBe("allow");
    expect(policy.judge(notification("notifications/progress", { progressToken: 1, progress: 2 })).action).toBe("deny");
    expect(policy.judge(request("tools/list")).action).toBe("allow");
    expect(policy.judge(request("tools/list")).action).toBe("allow");
    expect(policy.judge(response("tools/list", { tools: [] })).action).toBe("allow");
    const over = policy.judge(response("tools/list", { tools: [] }));
    expect(over).toMatchObject({ action: "flag", enforced: false, rules: [{ name: "answers", action: "flag" }] });
    expect(over.rules[0]!.reason).toMatch(/over 1 per minute.*an answer is not denied/);
  });
});
