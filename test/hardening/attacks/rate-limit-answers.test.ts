/**
 * A rate limit written as the README wrote it (`match: { method: tools/call }`) counted the answers as well
 * as the calls: it allowed half the calls its name says, and its denial could land on the **answer** of a
 * call the server had already run (the client told the call failed, and may run it again). A limit counts
 * the messages a call starts with (requests and notifications, in whichever direction) unless its match
 * names a `kind` or a `direction`; an answer is never denied for a rate limit.
 */
import { describe, expect, it } from "vitest";
import type { LogRecord } from "../../helpers/proxy-harness.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const POLICY = (perMinute: number): string => `mode: enforce
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }
rateLimits:
  - { name: calls-per-minute, match: { method: tools/call }, perMinute: ${perMinute}, action: deny }
`;

const call = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { message: `call ${id}` } } });

describe("rate limits count calls, not their answers (enforce mode)", () => {
  describe("perMinute: 1", () => {
    const scenario = wireScenario(POLICY(1));

    it("the one call allowed runs, and its answer reaches the client (not a denial of a call that ran)", async () => {
      const { up, client, url, proxy } = scenario;
      const before = up.requests.length;
      const res = await client.post(url, call(1));
      expect(up.requests.length).toBe(before + 1);
      expect(res.json).toMatchObject({ id: 1, result: { content: [{ type: "text" }] } });
      const answer = await proxy.waitForRecord((r: LogRecord) => r.event === "rpc" && r.id === 1 && r.direction === "server_to_client", { what: "answer record" });
      expect(answer.decision).toMatchObject({ action: "allow", rules: [] });
      // The second call is the one over the limit, refused before the server sees it.
      const second = await client.post(url, call(2));
      expect(second.json).toMatchObject({ id: 2, error: { code: -32051, data: { rules: [{ name: "calls-per-minute" }] } } });
      expect(up.requests.length).toBe(before + 1);
    });
  });

  describe("perMinute: 4, as in the README", () => {
    const scenario = wireScenario(POLICY(4));

    it("allows 4 calls a minute, not 2", async () => {
      const { up, client, url } = scenario;
      const before = up.requests.length;
      const answers = [];
      for (let id = 10; id < 15; id++) answers.push((await client.post(url, call(id))).json);
      expect(answers.slice(0, 4)).toEqual([10, 11, 12, 13].map((id) => expect.objectContaining({ id, result: expect.any(Object) })));
      expect(answers[4]).toMatchObject({ id: 14, error: { code: -32051 } });
      expect(up.requests.length).toBe(before + 4);
    });
  });
});
