/**
 * What `replay` prints is a peer's text shown on a terminal: control, bidi and invisible characters in the
 * server's answer (or the captured one) are written as `\uXXXX`, as the log writes them.
 */
import { describe, expect, it } from "vitest";
import { answerDiff } from "../../src/replay/answer-diff.js";
import { answerText } from "../../src/replay/replay.js";

const HOSTILE = "ok\u202e\u009b31m\u200b\u2028done";

describe("replay's printed answer", () => {
  it("escapes bidi, C1 and invisible characters in the answer and keeps it the same JSON", () => {
    const message = { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: HOSTILE }] } };
    const text = answerText(message);
    expect(text).not.toMatch(/[\u202e\u009b\u200b\u2028]/);
    expect(text).toContain("\\u202e");
    expect(JSON.parse(text)).toEqual(message);
  });

  it("escapes them in the diff beside the captured answer too", () => {
    const captured = { event: "rpc", kind: "response", result: { content: [{ type: "text", text: "before\u202e" }] } };
    const diff = answerDiff(captured, { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: HOSTILE }] } });
    expect(diff).not.toMatch(/[\u202e\u009b\u200b\u2028]/);
    expect(diff).toContain("\\u202e");
  });
});
