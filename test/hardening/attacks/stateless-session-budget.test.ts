/**
 * The stateless revision (2026-07-28) has no sessions: its servers never read `Mcp-Session-Id`. A client that
 * invents one per request made the proxy count each call in a budget of its own (`per: session`), so a limit of
 * 2 calls a minute let through as many calls as the client had invented ids. A stateless request is counted in
 * the server's sessionless budget whatever `Mcp-Session-Id` it carries.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LogRecord, TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const POLICY = `mode: enforce
rateLimits:
  - { name: calls, match: { method: tools/call, direction: client_to_server }, perMinute: 2, action: deny, per: session }
`;
const STATELESS = { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo" };

const call = (id: number): Record<string, unknown> => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: {}, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
});

describe("stateless requests with invented Mcp-Session-Id values and a per-session rate limit", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario(POLICY);
  beforeAll(() => void ({ up, proxy, client, url } = scenario));

  it("five calls, each under a new session id: two reach the server, three are over the limit", async () => {
    const before = up.requests.length;
    for (let id = 1; id <= 5; id++) await client.post(url, call(id), { ...STATELESS, "mcp-session-id": `invented-${id}` });
    const records: LogRecord[] = [];
    for (let id = 1; id <= 5; id++) {
      records.push(await proxy.waitForRecord((r) => r.event === "rpc" && r.id === id && r.direction === "client_to_server", { what: `request ${id}` }));
    }
    const over = records.filter((r) => (r.decision as { rules: { name: string }[] }).rules.some((x) => x.name === "calls"));
    expect(over.map((r) => r.id)).toEqual([3, 4, 5]);
    expect(up.requests.length - before).toBe(2);
  });
});
