/**
 * Member names that differ only in case. Go's encoding/json (mcp-go and other Go servers decode messages
 * into structs with it) matches an object key to a struct field case-insensitively, and of two keys that
 * match one field the last wins: `{"name":"echo","Name":"delete_everything"}` is a call of `echo` to the
 * proxy (JSON.parse) and of `delete_everything` to such a server. The proxy took it for an ordinary call
 * and forwarded it.
 */
import { describe, expect, it } from "vitest";
import { denyDeleteScenario, postNotForwarded } from "./denied-call-scenario.js";

const CASES: [string, (id: number) => string][] = [
  ["the tool name twice, the second capitalised", (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","Name":"delete_everything","arguments":{}}}`],
  ["the method twice, the second in capitals", (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping","METHOD":"tools/call","params":{"name":"delete_everything","arguments":{}}}`],
  ["only a capitalised tool name (no name JSON.parse reads)", (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"NAME":"delete_everything","arguments":{}}}`],
  // A case-folded member that is not a string must not switch off the normalised reading of the exact names.
  ["a method to normalise, beside a METHOD that is a number", (id) => `{"jsonrpc":"2.0","id":${id},"method":"Tools/Call","METHOD":0,"params":{"name":"delete_everything","arguments":{}}}`],
  ["a tool name to normalise, beside a NAME that is a number", (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything ","NAME":5,"arguments":{}}}`],
];

describe("member names that differ only in case (enforce mode)", () => {
  const s = denyDeleteScenario();

  let id = 1;
  for (const [name, body] of CASES) {
    it(`${name}: refused, never forwarded`, async () => {
      const n = id++;
      await postNotForwarded(s, body(n));
      const rec = await s.proxy.waitForRecord((r) => r.event === "rpc" && r.direction === "client_to_server" && r.id === n, { what: "the call's record" });
      expect(rec).toMatchObject({ decision: { action: "deny", enforced: true } });
    });
  }
});
