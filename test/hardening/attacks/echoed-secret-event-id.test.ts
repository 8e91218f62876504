/**
 * A server that quotes the client's bearer token back: in the SSE `id:` of its answer (an event id built
 * from the request, as some servers build resumption cursors), in a JSON-RPC error's `message`, in a progress
 * notification's `message`. The error and the progress message were removed by value; the event id was kept
 * in clear, since it counted among the members that identify a message. It does not say what the message
 * was (that is `method`, `tool`, `id`): it is now scrubbed by value like any other member. So are member
 * names: a result keyed by the client's token (`{"grants": {"<token>": "read"}}`) kept it in clear.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { sseEvent, sseHead, startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { wireClient, type WireClient } from "../../policy/wire-client.js";

const BEARER = "oPaQuEbEaReR7Qm2Lp9xK4";

describe("the client's credential echoed in an SSE event id or a member name", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("POST", "/mcp", (req, res) => {
      const id = (req.json as { id: number }).id;
      const token = String(req.headers.authorization).split(" ")[1];
      sseHead(res);
      res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1, message: `using ${token}` } }, { id: `p-${token}` }));
      res.end(sseEvent({ jsonrpc: "2.0", id, error: { code: -32001, message: `token ${token} lacks scope` } }, { id: `cursor-${token}-1` }));
    });
    proxy = await startTestProxy();
    client = wireClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
  });

  it("no record keeps it", async () => {
    const res = await client.post(`${up.url}/mcp`, { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: {}, _meta: { progressToken: 1 } } }, { authorization: `Bearer ${BEARER}` });
    expect(res.text).toContain(`cursor-${BEARER}-1`); // the client gets it as sent
    const error = await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "error", { what: "the error record" });
    expect(error.sseEventId).toBe("cursor-[redacted]-1");
    await proxy.waitForRecord((r) => r.event === "http" && r.path === "/mcp", { what: "http record" });
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(BEARER);
  });

  it("nor in a member name of a result", async () => {
    up.route("POST", "/names", (req, res) => {
      const token = String(req.headers.authorization).split(" ")[1]!;
      const body = JSON.stringify({ jsonrpc: "2.0", id: (req.json as { id: number }).id, result: { grants: { [token]: "read", [`${token}-2`]: "write" }, content: [] } });
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    });
    const res = await client.post(`${up.url}/names`, { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "echo", arguments: {} } }, { authorization: `Bearer ${BEARER}` });
    expect(res.text).toContain(BEARER);
    const answer = await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "response" && r.path === "/names", { what: "the response record" });
    expect((answer.result as { grants: Record<string, string> }).grants).toEqual({ "[redacted]": "read", "[redacted]-2": "write" });
    await proxy.waitForRecord((r) => r.event === "http" && r.path === "/names", { what: "http record" });
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(BEARER);
  });
});
