/**
 * A request body under a non-JSON content type is read by the enforcing proxy as JSON ("a lenient server may
 * accept JSON-RPC under any content type"), but as UTF-8 only: the content type's `charset` was dropped
 * before reading. A lenient server that honours it (express.text(), raw-body with iconv-lite) reads a
 * UTF-16 (or UTF-7) body as a call the proxy never judged: the body went upstream unjudged and unrecorded.
 */
import { describe, expect, it } from "vitest";
import iconv from "iconv-lite";
import { deniedCall, deniedRecorded, denyDeleteScenario, postNotForwarded } from "./denied-call-scenario.js";

describe("a request under a non-JSON content type with a charset (enforce mode)", () => {
  const s = denyDeleteScenario();

  let id = 1;
  for (const [type, charset] of [
    ["text/plain; charset=utf-16le", "utf-16le"],
    ["text/plain; charset=utf-16be", "utf-16be"],
    ["text/plain; x=application/json; charset=utf-7", "utf-7"],
    // Two Content-Type headers as a client merges them: no media type to the proxy, JSON to `includes("application/json")`.
    ["application/json, application/json; charset=utf-16le", "utf-16le"],
  ] as const) {
    it(`a denied call in ${charset} (${type}): never forwarded as a call the proxy did not judge`, async () => {
      const n = id++;
      const body = iconv.encode(deniedCall(n), charset);
      // The lenient reading, as express.text() / raw-body make it.
      expect(JSON.parse(iconv.decode(body, charset))).toMatchObject({ method: "tools/call", params: { name: "delete_everything" } });
      const res = await postNotForwarded(s, body, { "content-type": type });
      expect(res.status).not.toBe(502);
      // UTF-7 the proxy cannot decode: the body is refused whole, with no id read from it.
      expect(await deniedRecorded(s, charset === "utf-7" ? null : n)).toBe(true);
    });
  }
});
