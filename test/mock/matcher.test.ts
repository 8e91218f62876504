import { describe, expect, it } from "vitest";
import { CallMatcher, differingPaths } from "../../src/mock/matcher.js";
import type { RecordedCall } from "../../src/mock/recording.js";

const call = (selector: string, tool: string, args: Record<string, unknown>, text: string): RecordedCall => ({
  selector,
  method: "tools/call",
  tool,
  params: { name: tool, arguments: args },
  answer: { result: { content: [{ type: "text", text }] } },
  problem: null,
  progress: [],
  latencyMs: 1,
});
const CALLS = [call("f1#1", "echo", { message: "a" }, "A1"), call("f2#2", "echo", { message: "a" }, "A2"), call("f3#3", "get-sum", { a: 1, b: 2 }, "3"), call("f4#4", "echo", { message: "b" }, "B")];
const text = (m: ReturnType<CallMatcher["match"]>): string | null => (m.call ? ((m.call.answer as { result: { content: { text: string }[] } }).result.content[0]!.text) : null);

describe("CallMatcher", () => {
  it("exact: identical calls get their recorded answers in order, then the last again; _meta does not count", () => {
    const m = new CallMatcher(CALLS, "exact");
    const params = { name: "echo", arguments: { message: "a" }, _meta: { progressToken: 9 } };
    expect([1, 2, 3].map(() => text(m.match("tools/call", params)))).toEqual(["A1", "A2", "A2"]);
  });

  it("exact: a miss names the nearest call of the same tool and the differing paths", () => {
    const miss = new CallMatcher(CALLS, "exact").match("tools/call", { name: "get-sum", arguments: { a: 1, b: 5 } });
    expect(miss.call).toBeNull();
    if (miss.call === null) {
      expect(miss.nearest?.selector).toBe("f3#3");
      expect(miss.differing).toEqual(["arguments.b"]);
      expect(miss.explain).toContain("nearest recorded call: tools/call get-sum (f3#3), differing at arguments.b");
    }
  });

  it("tool: falls back to the latest answer of the tool", () => {
    expect(text(new CallMatcher(CALLS, "tool").match("tools/call", { name: "echo", arguments: { message: "zzz" } }))).toBe("B");
  });

  it("sequence: answers in recorded order, and says what it expected when the client goes elsewhere", () => {
    const m = new CallMatcher(CALLS, "sequence");
    expect(text(m.match("tools/call", { name: "echo", arguments: { message: "anything" } }))).toBe("A1");
    expect(text(m.match("tools/call", { name: "echo", arguments: {} }))).toBe("A2");
    const wrong = m.match("tools/call", { name: "echo", arguments: {} });
    expect(wrong.call).toBeNull();
    if (wrong.call === null) expect(wrong.explain).toContain("expects tools/call get-sum next (call 3 of 4)");
  });

  it("differingPaths: members on one side only count; deep values are bounded", () => {
    expect(differingPaths({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 3] }, d: true })).toEqual(["b.c.1", "d"]);
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(differingPaths(deep, 2)).toEqual(["(params)"]);
    expect(differingPaths({ x: deep }, { x: deep })).toHaveLength(1); // too deep to compare: never equal
  });
});
