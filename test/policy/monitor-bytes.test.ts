/**
 * Monitor mode never changes a byte: with a policy that would deny (a rule, secrets, poisoning), what the
 * client receives through the proxy is byte-identical to what the upstream sent, requests reach the
 * upstream unchanged (headers included), and the records say deny, enforced: false.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import type { LogRecord, TestProxy } from "../helpers/proxy-harness.js";
import { AWS_KEY_ID, defaultScript, event, LISTED_TOOLS, leakResult, type ScriptedMcp } from "./scripted-server.js";
import type { WireClient } from "./wire-client.js";
import { wireScenario } from "./wire-scenario.js";

const POLICY = `mode: monitor
rules:
  - name: no-delete
    action: deny
    reason: destructive
    match: { tool: delete_everything }
detectors: { secrets: deny, poisoning: deny }
`;

const isRpc = (r: LogRecord): boolean => r.event === "rpc";
type Decision = { action: string; enforced: boolean; effect?: string; rules: { name: string }[] };

describe("monitor mode leaves the bytes identical", () => {
  let up: ScriptedUpstream;
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario(POLICY);
  beforeAll(() => void ({ up, mcp, proxy, client, url } = scenario));

  async function denialRecord(id: unknown, direction: string): Promise<LogRecord> {
    return proxy.waitForRecord((r) => isRpc(r) && r.id === id && r.direction === direction, { what: `${direction} record for id ${String(id)}` });
  }

  it("a tool result with an AWS key (JSON): same bytes, record deny / enforced: false, no effect", async () => {
    mcp.setScript(defaultScript);
    const res = await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "lookup", arguments: {} } });
    expect(res.body.equals(mcp.sent.at(-1)!)).toBe(true);
    expect(res.text).toContain(AWS_KEY_ID);
    expect(res.headers["content-length"]).toBe(String(res.body.length));
    const d = (await denialRecord(1, "server_to_client")).decision as Decision;
    expect(d).toMatchObject({ action: "deny", enforced: false, rules: [{ name: "detector:secrets" }] });
    expect(d.effect).toBeUndefined();
  });

  it("an event stream with a denied notification and a denied response: same bytes, CRLF framing and all", async () => {
    const note = event({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `key=${AWS_KEY_ID}` } }, "e1");
    const answer = event(leakResult(2), "e2").replace(/\n/g, "\r\n");
    mcp.setScript(() => ({ kind: "sse", events: `: keepalive\n\n${note}${answer}` }));
    const res = await client.post(url, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "lookup", arguments: {} } });
    expect(res.headers["content-type"]).toBe("text/event-stream");
    expect(res.body.equals(mcp.sent.at(-1)!)).toBe(true);
    expect(((await denialRecord(2, "server_to_client")).decision as Decision)).toMatchObject({ action: "deny", enforced: false });
    const n = await proxy.waitForRecord((r) => isRpc(r) && r.method === "notifications/message", { what: "notification record" });
    expect(n.decision).toMatchObject({ action: "deny", enforced: false });
  });

  it("a poisoned tools/list: every tool still reaches the client, same bytes", async () => {
    mcp.setScript(defaultScript);
    const res = await client.post(url, { jsonrpc: "2.0", id: 3, method: "tools/list" });
    expect(res.body.equals(mcp.sent.at(-1)!)).toBe(true);
    expect((res.json as { result: { tools: unknown[] } }).result.tools).toEqual(LISTED_TOOLS);
    expect(((await denialRecord(3, "server_to_client")).decision as Decision)).toMatchObject({ action: "deny", enforced: false, rules: [{ name: "detector:poisoning" }] });
  });

  it("a denied request is forwarded as sent, Accept-Encoding untouched", async () => {
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "delete_everything", arguments: { really: true } } }));
    const before = up.requests.length;
    const res = await client.post(url, body, { "accept-encoding": "gzip, br" });
    expect(res.status).toBe(200);
    expect(up.requests.length).toBe(before + 1);
    const got = up.requests.at(-1)!;
    expect(got.body.equals(body)).toBe(true);
    expect(got.headers["accept-encoding"]).toBe("gzip, br");
    const d = (await denialRecord(4, "client_to_server")).decision as Decision;
    expect(d).toMatchObject({ action: "deny", enforced: false });
    expect(d.rules.map((r) => r.name)).toContain("no-delete");
  });

  it("the records mask the key the client did receive (the secrets detector found it)", () => {
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(AWS_KEY_ID);
  });
});
