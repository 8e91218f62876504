/**
 * Enforce mode lets a body larger than --max-inspect-bytes through unjudged when it is sent under a
 * non-JSON content type on an exchange without MCP headers (an upload is not MCP). A lenient server reads
 * JSON under any content type: a denied call padded past the limit went upstream with no rpc record. Now
 * such a body that starts like JSON (or with nothing but padding) is refused (413); other uploads pass.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const denied = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;

describe("a large body under a non-JSON content type (enforce mode, 4 KiB inspection limit)", () => {
  let up: ScriptedUpstream;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario(`mode: enforce\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n`, { maxInspectBytes: 4096 });
  beforeAll(() => void ({ up, client, url } = scenario));

  for (const [name, body] of [
    ["a denied call padded with spaces after it", denied + " ".repeat(5000)],
    ["a denied call after 5,000 spaces", " ".repeat(5000) + denied],
    ["a denied call in a batch, padded", `[${denied}${" ".repeat(5000)}]`],
  ] as const) {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      it(`${name} (${type}): refused, never forwarded`, async () => {
        const before = up.requests.length;
        const res = await client.post(url, body, { "content-type": type });
        expect(res.status).toBe(413);
        expect(up.requests.length).toBe(before);
      });
    }
  }

  it("an upload that does not start like JSON still passes", async () => {
    const before = up.requests.length;
    await client.post(url, `field=${"x".repeat(5000)}`, { "content-type": "application/x-www-form-urlencoded" });
    expect(up.requests.length).toBe(before + 1);
  });
});
