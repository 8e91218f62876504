/**
 * A request body labelled `text/event-stream`. The proxy reads every other non-JSON request body as JSON too
 * ("a lenient server may accept JSON-RPC under any content type"), but this one it read as an event stream
 * only, and a JSON body has no `data:` line: nothing was judged, the exchange was not yet known to be MCP,
 * and enforce mode forwarded the denied call, with no record of it.
 */
import { describe, expect, it } from "vitest";
import { deniedCall, deniedRecorded, denyDeleteScenario, postNotForwarded } from "./denied-call-scenario.js";

describe("a JSON-RPC request labelled text/event-stream (enforce mode)", () => {
  const s = denyDeleteScenario();

  let id = 1;
  for (const type of ["text/event-stream", "text/event-stream; x=application/json"]) {
    it(`a denied call (${type}): judged and refused, never forwarded`, async () => {
      const n = id++;
      await postNotForwarded(s, deniedCall(n), { "content-type": type });
      expect(await deniedRecorded(s, n)).toBe(true);
    });
  }
});
