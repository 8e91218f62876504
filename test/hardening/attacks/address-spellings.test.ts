/**
 * One address, many spellings. `deny server: "127.0.0.1:PORT"` was bypassed with `[::ffff:127.0.0.1]`: the
 * CONNECT was accepted, judged as another server, and reached 127.0.0.1. IPv4-mapped (::ffff:a.b.c.d) and
 * IPv4-compatible (::a.b.c.d) IPv6 literals route to the IPv4 address they hold, so they are read as it:
 * for server rules, records (and so pins, rate limits and the tool catalog, which all key on the server
 * name). Other IPv6 spellings of one address (0:0:0:0:0:0:0:1, ::0001) are read in their one canonical
 * form; the unspecified addresses (0.0.0.0, ::), which the OS connects to this host, are refused.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { openTunnel, parseRawResponse, rawProxyExchange, type LogRecord, type TestProxy } from "../../helpers/proxy-harness.js";
import { wireClient } from "../../policy/wire-client.js";
import { enforceAndMonitor } from "../../policy/wire-scenario.js";

const rules = (port: number) => `rules:
  - name: no-loopback-mcp
    action: deny
    reason: loopback MCP servers are not approved
    match: { server: "127.0.0.1:${port}" }
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }
`;

const MAPPED = (port: number): string[] => [
  `[::ffff:127.0.0.1]:${port}`,
  `[::FFFF:7F00:1]:${port}`,
  `[0:0:0:0:0:ffff:127.0.0.1]:${port}`,
  `[::127.0.0.1]:${port}`,
  `[::7f00:1]:${port}`,
];

describe("address spellings that route to one place", () => {
  let up: ScriptedUpstream;
  let enforce: TestProxy;
  let monitor: TestProxy;
  const pair = enforceAndMonitor(rules);
  beforeAll(() => void ({ up, enforce, monitor } = pair));

  it("enforce: CONNECT to an IPv4-mapped or IPv4-compatible spelling of a denied address is refused by its rule", async () => {
    for (const authority of MAPPED(up.port)) {
      const before = up.requests.length;
      const t = await openTunnel(enforce, authority);
      t.socket.destroy();
      expect(t.status, authority).toBe(403);
      expect(t.response.body.toString(), authority).toBe(
        `mcp-wiretap: 127.0.0.1:${up.port} is denied by policy rule no-loopback-mcp: loopback MCP servers are not approved\n`,
      );
      expect(up.requests.length).toBe(before);
    }
    const refused = (await enforce.records()).filter((r) => r.event === "refused" && r.stage === "connect");
    expect(refused.map((r) => r.target)).toEqual(MAPPED(up.port).map(() => `127.0.0.1:${up.port}`));
  });

  it("enforce: an absolute-URI request to the mapped spelling is denied by the rule before the server sees it", async () => {
    const before = up.requests.length;
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const answer = parseRawResponse(
      await rawProxyExchange(
        enforce,
        `POST http://[::ffff:127.0.0.1]:${up.port}/mcp HTTP/1.1\r\nHost: [::ffff:127.0.0.1]:${up.port}\r\ncontent-type: application/json\r\n` +
          `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      ),
    );
    expect(JSON.parse(answer.body.toString())).toMatchObject({ id: 1, error: { code: -32051, data: { rules: [{ name: "no-loopback-mcp" }] } } });
    expect(up.requests.length).toBe(before);
    const rec = await enforce.waitForRecord((r: LogRecord) => r.event === "rpc" && r.id === 1 && r.direction === "client_to_server", { what: "rpc record" });
    expect(rec.server).toBe(`127.0.0.1:${up.port}`);
  });

  it("monitor: a mapped spelling works end to end (the leaf is valid for the spelling used) and is recorded as the IPv4 address", async () => {
    const client = wireClient(monitor);
    try {
      const res = await client.post(`https://[::ffff:127.0.0.1]:${up.port}/mcp`, { jsonrpc: "2.0", id: 7, method: "tools/list" });
      expect(res.status).toBe(200);
    } finally {
      await client.close();
    }
    const rpc = await monitor.waitForRecord((r: LogRecord) => r.event === "rpc" && r.id === 7 && r.direction === "client_to_server", { what: "rpc record" });
    expect(rpc.server).toBe(`127.0.0.1:${up.port}`);
    expect(rpc.decision).toMatchObject({ action: "deny", enforced: false, rules: [{ name: "no-loopback-mcp" }] });
  });

  it.each(["[::1%lo]", "[::1%25lo]", "[::ffff:127.0.0.1%eth0]", "[fe80::1%eth0]"])("refuses CONNECT to an IPv6 literal with a zone id, %s (a rule on the address would not see it)", async (host) => {
    const answer = parseRawResponse(await rawProxyExchange(enforce, `CONNECT ${host}:${up.port} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).toContain("zone id");
  });

  it.each(["0.0.0.0", "[::]", "[::ffff:0.0.0.0]", "[0:0:0:0:0:0:0:0]"])("refuses CONNECT to the unspecified address %s (the OS connects it to this host)", async (host) => {
    const before = up.requests.length;
    const answer = parseRawResponse(await rawProxyExchange(enforce, `CONNECT ${host}:${up.port} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect(answer.status).toBe(400);
    expect(answer.body.toString()).toContain("unspecified address");
    expect(up.requests.length).toBe(before);
  });
});
