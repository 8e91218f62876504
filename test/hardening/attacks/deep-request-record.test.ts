/**
 * A request nested past the depth limit, sent without any MCP header, is not known to be MCP when its body
 * is read: its problem must still be recorded once the answer shows the exchange is MCP (monitor mode), not
 * lost, leaving only an answer to "no pending request".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { rpcResult, startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { fetchRaw, proxyAgent } from "../input/input-kit.js";

describe("a request too deep to judge, on an exchange not yet known to be MCP", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("POST", "/deep", (_req, res) => {
      const body = JSON.stringify(rpcResult(1, { content: [{ type: "text", text: "ran" }] }));
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    });
    proxy = await startTestProxy();
  });
  afterAll(async () => {
    await proxy?.stop();
    await up?.close();
  });

  it("monitor mode: the request gets an invalid record naming the depth, before its answer", async () => {
    const deep = '{"a":'.repeat(300) + "1" + "}".repeat(300);
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_everything","arguments":${deep}}}`;
    const res = await fetchRaw(proxyAgent(proxy), `${up.url}/deep`, { method: "POST", headers: { "content-type": "application/json" }, body: Buffer.from(body) });
    expect(res.status).toBe(200);
    const answer = await proxy.waitForRecord((r) => r.event === "rpc" && r.path === "/deep" && r.direction === "server_to_client", { what: "the answer's record" });
    const records = (await proxy.records()).filter((r) => r.event === "rpc" && r.path === "/deep");
    const request = records.find((r) => r.direction === "client_to_server");
    expect(request).toMatchObject({ kind: "invalid", reason: expect.stringMatching(/^json_too_deep: JSON body nests deeper than 256 levels/) });
    expect(records.indexOf(request!)).toBeLessThan(records.indexOf(records.find((r) => r === answer || (r.direction === "server_to_client"))!));
  });
});
