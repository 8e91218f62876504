/**
 * A request body under a non-JSON content type is read by the enforcing proxy as JSON ("a lenient server may
 * accept JSON-RPC under any content type"), but as UTF-8 only: the content type's `charset` was dropped
 * before reading. A lenient server that honours it (express.text(), raw-body with iconv-lite) reads a
 * UTF-16 (or UTF-7) body as a call the proxy never judged: the body went upstream unjudged and unrecorded.
 */
import { beforeAll, describe, expect, it } from "vitest";
import iconv from "iconv-lite";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";
import type { TestProxy } from "../../helpers/proxy-harness.js";

const denied = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;

describe("a request under a non-JSON content type with a charset (enforce mode)", () => {
  let up: ScriptedUpstream;
  let client: WireClient;
  let proxy: TestProxy;
  let url: string;
  const scenario = wireScenario(`mode: enforce\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n`);
  beforeAll(() => void ({ up, client, url, proxy } = scenario));

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
      const body = iconv.encode(denied(n), charset);
      // The lenient reading, as express.text() / raw-body make it.
      expect(JSON.parse(iconv.decode(body, charset))).toMatchObject({ method: "tools/call", params: { name: "delete_everything" } });
      const before = up.requests.length;
      const res = await client.post(url, body, { "content-type": type });
      expect(up.requests.length, `forwarded (status ${res.status}: ${res.text})`).toBe(before);
      expect(res.status).not.toBe(502);
      const records = await proxy.records();
      expect(records.some((r) => (r as { direction?: string }).direction === "client_to_server" && (r as { decision?: { action?: string } }).decision?.action === "deny")).toBe(true);
    });
  }
});
