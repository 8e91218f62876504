/**
 * A peer that sends many credential-named members, or a stream of them. Each value is removed by value from
 * every later record of its exchange and session, and that removal tried every value on every string of a
 * record: with payloads kept (`--payloads full`), one 370 kB call with 16,000 `tokenN` members held the event
 * loop for seconds per record (quadratic: twice the members, four times the stall), and a stream that never
 * ends (a GET stream, a long SSE answer, a stdio launch) grew the exchange's table without bound, as did
 * sessions with long values. Now each exchange keeps its request's credentials and the most recent values it
 * learned, bounded in count and characters, sessions are bounded in characters, and a record is searched once
 * for all of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExchangeSecrets } from "../../../src/log/exchange-secrets.js";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { json, rpcResult, startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { wireClient, type WireClient } from "../../policy/wire-client.js";

const MEMBERS = 16_000;

function call(id: number, name: (i: number) => string): Record<string, unknown> {
  const args: Record<string, string> = {};
  for (let i = 0; i < MEMBERS; i++) args[name(i)] = `v${String(i).padStart(7, "0")}`;
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: args } };
}

describe("many credential values on one exchange", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("POST", "/mcp", (req, res) => json(res, rpcResult((req.json as { id: number }).id, { content: [{ type: "text", text: "ok" }] })));
    proxy = await startTestProxy({ payloads: "full" });
    client = wireClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
  });

  const timed = async (id: number, name: (i: number) => string): Promise<number> => {
    const started = performance.now();
    const res = await client.post(`${up.url}/mcp?n=${id}`, call(id, name));
    expect(res.status).toBe(200);
    await proxy.waitForRecord((r) => r.event === "http" && r.path === `/mcp?n=${id}`, { timeoutMs: 60_000 });
    return performance.now() - started;
  };

  it("cost about what the same call with ordinary names costs", async () => {
    const plain = await timed(1, (i) => `arg${i}`);
    const secret = await timed(2, (i) => `token${i}`);
    // Side by side in one run: a busy machine slows both alike.
    expect(secret, `plain ${plain.toFixed(0)} ms`).toBeLessThan(4 * plain + 2_000);
    const records = await proxy.records();
    const request = records.find((r) => r.event === "rpc" && r.id === 2 && r.kind === "request");
    expect(JSON.stringify(request)).not.toContain("v0000042"); // still redacted by name
  }, 90_000);
});

describe("the credentials table stays bounded in characters", () => {
  it("a stream that goes on sending credential values holds a bounded set", () => {
    const secrets = new ExchangeSecrets();
    secrets.begin({ id: "stream", request: { path: "/mcp", headers: { authorization: "Bearer client-bearer-token" } } });
    for (let i = 0; i < 2_000; i++) secrets.add("stream", null, [`${i}-`.padEnd(4_096, "x")]);
    expect(secrets.heldChars).toBeLessThanOrEqual(2 * 1024 * 1024);
    // The client's own credential and the latest value learned are still removed.
    const latest = "1999-".padEnd(4_096, "x");
    expect(secrets.scrub({ event: "http", flow: "stream", note: `echo client-bearer-token ${latest}` }).note).toBe("echo [redacted] [redacted]");
  });

  it("sessions with long values are bounded as a whole", () => {
    const secrets = new ExchangeSecrets();
    for (let s = 0; s < 400; s++) secrets.add(`flow-${s}`, `session-${s}`, Array.from({ length: 16 }, (_, i) => `${s}-${i}-`.padEnd(64 * 1024, "y")));
    expect(secrets.heldChars).toBeLessThanOrEqual(64 * 1024 * 1024);
  });
});
