/**
 * Enforce mode, a call under a non-JSON content type with no MCP header, behind a prefix that JSON.parse
 * refuses but lenient readers skip: a vertical tab or NBSP (`JSON.parse(text.trim())`, Python's
 * `json.loads(body.strip())`), a comment (Gson lenient, System.Text.Json skipping comments), an XSSI guard
 * `)]}'`. It reached the upstream with no record of the request, small or past the inspection limit. Now such
 * a body that may hold a call is refused and recorded; a large one that does not start like a form or a
 * word is refused (413).
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const denied = `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get-env","arguments":{}}}`;
const PREFIXES: [string, string][] = [
  ["a vertical tab", "\x0b"],
  ["a comment", "/*x*/"],
  ["an NBSP", "\u00a0"],
  ["an XSSI guard", ")]}'\n"],
];

describe("a denied call behind a prefix lenient readers skip (enforce mode, text/plain, no MCP header)", () => {
  let up: ScriptedUpstream;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario(`mode: enforce\nrules:\n  - { name: no-env, action: deny, match: { tool: get-env } }\n`, { maxInspectBytes: 4096 });
  beforeAll(() => void ({ up, client, url } = scenario));

  for (const [name, prefix] of PREFIXES) {
    it(`${name}, small: refused with the unreadable-message error, never forwarded, recorded`, async () => {
      const before = up.requests.length;
      const res = await client.post(url, prefix + denied, { "content-type": "text/plain" });
      expect(up.requests.length).toBe(before);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.toString()).error.code).toBe(-32052);
      const record = await scenario.proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "invalid" && r.direction === "client_to_server" && /lenient reader may read as a call/.test(String(r.reason)), { what: "the refused request's record" });
      expect(record.decision).toMatchObject({ action: "deny", enforced: true });
    });

    it(`${name}, padded past the inspection limit: refused (413), never forwarded`, async () => {
      const before = up.requests.length;
      const res = await client.post(url, prefix + denied + " ".repeat(5000), { "content-type": "text/plain" });
      expect(res.status).toBe(413);
      expect(up.requests.length).toBe(before);
    });
  }

  it("plain text and forms that hold no call still pass, small and large", async () => {
    const before = up.requests.length;
    await client.post(url, "hello, world: {not a call}", { "content-type": "text/plain" });
    await client.post(url, `field=${"x".repeat(5000)}`, { "content-type": "application/x-www-form-urlencoded" });
    expect(up.requests.length).toBe(before + 2);
  });
});
