/**
 * A long notification (scanned in slices, so judged and recorded after its body is read) carries a credential
 * in a secret member; the server quotes it in the header of its 202. The exchange's `http` record must not keep it:
 * the record waits until the request's record has said what it hides. Before, the `http` record could be
 * written first, with the header in clear.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { wireClient, type WireClient } from "../../policy/wire-client.js";

const PASSWORD = "pw9Zq4Lm-P2vN7-opaque";

describe("a credential in a long notification, echoed by the server", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("POST", "/mcp", (req, res) => {
      const sent = (req.json as { params?: { password?: string } }).params?.password ?? "";
      // A notification is answered 202, no body: no answer of the exchange waits for the request's record.
      res.writeHead(202, { "x-debug": `login with ${sent} noted` });
      res.end();
    });
    proxy = await startTestProxy();
    client = wireClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
  });

  it("is masked in the exchange's http record", async () => {
    const notes = "lorem ipsum dolor sit amet ".repeat(40_000);
    for (let n = 1; n <= 3; n++) {
      const res = await client.post(`${up.url}/mcp`, { jsonrpc: "2.0", method: "notifications/login", params: { password: PASSWORD, notes } });
      expect(res.headers["x-debug"]).toContain(PASSWORD);
    }
    const http = await proxy.waitForRecords((r) => r.event === "http" && r.path === "/mcp", 3, { timeoutMs: 30_000 });
    for (const record of http) {
      expect((record.responseHeaders as Record<string, string>)["x-debug"]).toBeDefined();
      expect(JSON.stringify(record)).not.toContain(PASSWORD);
    }
  }, 60_000);
});
