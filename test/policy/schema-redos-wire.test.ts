/**
 * A hostile server's catastrophic pattern through the running proxy: the event loop stays responsive
 * while the call is judged, and the call still gets its record.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LogRecord, TestProxy } from "../helpers/proxy-harness.js";
import { defaultScript, type ScriptedMcp } from "./scripted-server.js";
import type { WireClient } from "./wire-client.js";
import { wireScenario } from "./wire-scenario.js";

const POLICY = "mode: monitor\ndetectors: { schema: flag }\n";
const EVIL_TOOL = { name: "match", description: "matches", inputSchema: { type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } } };

describe("ReDoS from a server's inputSchema (running proxy)", () => {
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario(POLICY);
  beforeAll(() => void ({ mcp, proxy, client, url } = scenario));

  it("a call with 31 a's and a '!' does not stall the event loop; its record is written", { timeout: 120_000 }, async () => {
    mcp.setScript((m, req) =>
      m.method === "tools/list" ? { kind: "json", value: { jsonrpc: "2.0", id: m.id, result: { tools: [EVIL_TOOL] } } } : defaultScript(m, req),
    );
    await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    await proxy.waitForRecord((r) => r.event === "rpc" && r.method === "tools/list" && r.direction === "server_to_client");

    // The proxy runs in this process: a 10 ms timer that fires late measures how long the loop was blocked.
    let worstGapMs = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worstGapMs = Math.max(worstGapMs, now - last);
      last = now;
    }, 10);
    try {
      await client.post(url, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "match", arguments: { s: `${"a".repeat(31)}!` } } });
      const record = await proxy.waitForRecord((r: LogRecord) => r.event === "rpc" && r.id === 2 && r.direction === "client_to_server", { timeoutMs: 60_000 });
      expect((record.decision as { rules: { name: string; findings?: { type: string }[] }[] }).rules).toMatchObject([
        { name: "detector:schema", findings: [{ type: "schema_violation" }] },
      ]);
    } finally {
      clearInterval(ticker);
    }
    // Seconds before the fix (12.8 s measured); a loaded machine stays far below one second.
    expect(worstGapMs).toBeLessThan(1_000);
  });
});
