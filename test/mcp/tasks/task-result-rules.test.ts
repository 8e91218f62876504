/**
 * A task's final result is judged as the result of the call that created it: a result rule on that tool
 * holds. When the proxy no longer follows the task (its ttl passed, the table overflowed, its id was too
 * long to follow), it cannot tell which call's result a tasks/result answer carries: enforce mode refuses
 * it instead of judging it as the result of no tool. The production pipeline and policy, a clock of the test's.
 */
import { describe, expect, it } from "vitest";
import type { TrackedContext } from "../../../src/mcp/tracker.js";
import { UNREADABLE_RULE } from "../../../src/policy/enforcement.js";
import { recordingPipeline } from "../../pipeline/pipeline-fixtures.js";
import { policyFrom } from "../../policy/policy-fixtures.js";

const POLICY = (mode: string) => `mode: ${mode}
rules:
  - name: no-secret-results
    action: deny
    reason: results of read_secret never reach the client
    match: { method: tools/call, tool: read_secret, direction: server_to_client, kind: response }
`;

function rig(mode: "enforce" | "monitor") {
  let clock = 1_000_000;
  const { pipeline } = recordingPipeline(policyFrom(POLICY(mode), { now: () => clock }), { payloads: { payloads: "truncated", maxPayloadBytes: 1000 }, now: () => clock });
  const ctx = (direction: TrackedContext["direction"]): TrackedContext => ({ flow: "f1", transport: "streamable-http", server: "127.0.0.1:9", path: "/mcp", session: "s1", protocolVersion: "2025-11-25", direction, scope: "s1" });
  const send = (m: Record<string, unknown>) => pipeline.message(ctx("client_to_server"), { jsonrpc: "2.0", ...m }, 100);
  const answer = (m: Record<string, unknown>) => pipeline.message(ctx("server_to_client"), { jsonrpc: "2.0", ...m }, 100);
  const decisionOf = (j: ReturnType<typeof answer>) => {
    if (j instanceof Promise) throw new Error("judged at once");
    return j.decision;
  };
  /** read_secret as a task: created with `taskId`/`ttl`, then, `waitMs` later, its result fetched. */
  const run = (taskId: string, ttl: number | null, waitMs: number) => {
    send({ id: 1, method: "tools/call", params: { name: "read_secret", arguments: {}, task: { ttl: 60_000 } } });
    answer({ id: 1, result: { task: { taskId, status: "working", ttl, createdAt: "", lastUpdatedAt: "" } } });
    clock += waitMs;
    send({ id: 2, method: "tasks/result", params: { taskId } });
    return decisionOf(answer({ id: 2, result: { content: [{ type: "text", text: "the secret" }], _meta: { "io.modelcontextprotocol/related-task": { taskId } } } }));
  };
  return { run };
}

describe("a task's result under a result rule", () => {
  it("a followed task's result is denied by the rule on its tool", () => {
    expect(run("enforce", "t-1", 60_000, 10)).toMatchObject({ action: "deny", enforced: true, rules: [{ name: "no-secret-results" }] });
  });

  it("a task whose ttl passed before its result was fetched: enforce mode still refuses the result", () => {
    const decision = run("enforce", "t-1", 1, 2_000);
    expect(decision).toMatchObject({ action: "deny", enforced: true });
    expect(decision.rules).toContainEqual(expect.objectContaining({ name: UNREADABLE_RULE, reason: expect.stringMatching(/task the proxy does not follow/) }));
  });

  it("a task id too long to follow: enforce mode refuses the result", () => {
    expect(run("enforce", "x".repeat(300), null, 10)).toMatchObject({ action: "deny", enforced: true, rules: [{ name: UNREADABLE_RULE }] });
  });

  it("a task id that is not a string (never followed): enforce mode refuses the result", () => {
    expect(run("enforce", 7 as unknown as string, null, 10)).toMatchObject({ action: "deny", enforced: true, rules: [{ name: UNREADABLE_RULE }] });
  });

  it("monitor mode forwards such a result and flags it", () => {
    expect(run("monitor", "t-1", 1, 2_000)).toMatchObject({ action: "flag", enforced: false, rules: [{ name: UNREADABLE_RULE }] });
  });
});

function run(mode: "enforce" | "monitor", taskId: string, ttl: number | null, waitMs: number) {
  return rig(mode).run(taskId, ttl, waitMs);
}
