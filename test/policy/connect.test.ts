/**
 * CONNECT refusal: a deny rule that names only a server refuses the tunnel itself in enforce mode (403
 * with the reason, before any byte reaches the server); monitor mode lets it through and says so.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { curl, hasCurl, type LogRecord, openTunnel, type TestProxy } from "../helpers/proxy-harness.js";
import { wireClient } from "./wire-client.js";
import { enforceAndMonitor } from "./wire-scenario.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";
import { skipNote } from "../helpers/skip-note.js";

const rules = (port: number) => `rules:
  - name: no-loopback-mcp
    action: deny
    reason: loopback MCP servers are not approved
    match: { server: "127.0.0.1:${port}" }
  - name: no-blocked-names
    action: deny
    match: { server: "*.blocked.test" }
  - name: no-delete-here
    action: deny
    match: { server: "*.narrow.test", tool: delete_everything }
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }
`;

const isPolicy = (r: LogRecord): boolean => r.event === "policy";

skipNote(import.meta.url, !hasCurl, "curl is not installed");
describe("CONNECT refusal", () => {
  let up: ScriptedUpstream;
  let enforce: TestProxy;
  let monitor: TestProxy;
  const pair = enforceAndMonitor(rules);
  beforeAll(() => void ({ up, enforce, monitor } = pair));

  it("enforce: CONNECT to a denied host:port is answered 403 with the rule and reason; nothing reaches the server", async () => {
    const before = up.requests.length;
    const t = await openTunnel(enforce, `127.0.0.1:${up.port}`);
    expect(t.status).toBe(403);
    expect(t.response.body.toString()).toBe(`mcp-wiretap: 127.0.0.1:${up.port} is denied by policy rule no-loopback-mcp: loopback MCP servers are not approved\n`);
    expect(t.response.headers.connection).toBe("close");
    expect(up.requests.length).toBe(before);
    const rec = await enforce.waitForRecord(isPolicy, { what: "policy record" });
    expect(rec).toMatchObject({
      level: "warn",
      event: "policy",
      stage: "connect",
      server: `127.0.0.1:${up.port}`,
      decision: { action: "deny", enforced: true, rules: [{ name: "no-loopback-mcp", reason: "loopback MCP servers are not approved" }] },
    });
    expectRecordsMatchSchemas(await enforce.records(), "policy", "refused");
  });

  it("enforce: a host-name glob refuses without resolving the name; the default reason names the rule", async () => {
    const t = await openTunnel(enforce, "mcp.blocked.test:443");
    expect(t.status).toBe(403);
    expect(t.response.body.toString()).toBe("mcp-wiretap: mcp.blocked.test:443 is denied by policy rule no-blocked-names: host mcp.blocked.test is denied by rule no-blocked-names\n");
  });

  it.skipIf(!hasCurl)("enforce: curl through the proxy sees the 403 CONNECT answer", async () => {
    const r = await curl(["-sS", "-o", "/dev/null", "-w", "%{http_connect}", "-x", enforce.url, "--cacert", enforce.caCertPath, `https://127.0.0.1:${up.port}/mcp`]);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("403");
  });

  it("enforce: a deny rule with more than a server does not refuse the CONNECT (it judges messages instead)", async () => {
    const t = await openTunnel(enforce, "mcp.narrow.test:443");
    expect(t.status).toBe(200);
    t.socket.destroy();
    const other = await openTunnel(enforce, `127.0.0.1:${up.port + 1 === 65536 ? 1 : up.port + 1}`);
    expect(other.status).toBe(200);
    other.socket.destroy();
  });

  it("monitor: the CONNECT goes through, MCP traffic flows, and the policy record says enforced: false", async () => {
    const client = wireClient(monitor);
    try {
      const res = await client.post(`${up.url}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list" });
      expect(res.status).toBe(200);
      expect((res.json as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
    const rec = await monitor.waitForRecord(isPolicy, { what: "policy record" });
    expect(rec).toMatchObject({
      event: "policy",
      stage: "connect",
      server: `127.0.0.1:${up.port}`,
      decision: { action: "deny", enforced: false, rules: [{ name: "no-loopback-mcp" }] },
    });
    // Every message of that server is denied by the same rule, not enforced.
    const rpc = await monitor.waitForRecord((r) => r.event === "rpc" && r.id === 1 && r.direction === "server_to_client", { what: "rpc record" });
    expect(rpc.decision).toMatchObject({ action: "deny", enforced: false, rules: [{ name: "no-loopback-mcp" }] });
    expectRecordsMatchSchemas(await monitor.records(), "policy", "http", "rpc");
  });
});
