/**
 * Enforce mode on the wire, against a scripted upstream: what each kind of denied message becomes.
 * Server side: a tool result carrying a credential (JSON and event-stream forms), a server notification,
 * a poisoned tool in tools/list (removed, or the whole list refused). Client side: requests (JSON and SSE
 * answers), notifications, responses, batches, oversized bodies, and Accept-Encoding.
 */
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import type { LogRecord, TestProxy } from "../helpers/proxy-harness.js";
import { AWS_KEY_ID, CLEAN_TOOLS, event, leakResult, type ScriptedMcp, defaultScript } from "./scripted-server.js";
import { sseData, sseEvents, type WireClient } from "./wire-client.js";
import { wireScenario } from "./wire-scenario.js";

const POLICY = `mode: enforce
rules:
  - name: no-delete
    action: deny
    reason: destructive
    match: { tool: delete_everything }
  - name: no-telemetry
    action: deny
    match: { method: notifications/telemetry }
detectors: { secrets: deny, poisoning: deny }
`;
const MAX_INSPECT = 64 * 1024;

const isRpc = (r: LogRecord): boolean => r.event === "rpc";
type Decision = { action: string; enforced: boolean; effect?: string; rules: { name: string; findings?: { type: string; path: string }[] }[] };
const decisionOf = (r: LogRecord): Decision => r.decision as Decision;

describe("enforce mode on the wire (scripted upstream)", () => {
  let up: ScriptedUpstream;
  let mcp: ScriptedMcp;
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let nextId = 100;
  const scenario = wireScenario(POLICY, { maxInspectBytes: MAX_INSPECT });
  beforeAll(() => void ({ up, mcp, proxy, client, url } = scenario));
  beforeEach(() => mcp.setScript(defaultScript));

  /** Requests the upstream received with this JSON-RPC method. */
  const received = (method: string): number =>
    up.requests.filter((r) => (Array.isArray(r.json) ? r.json : [r.json]).some((m: { method?: unknown }) => m?.method === method)).length;
  const call = (name: string, args: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } });

  describe("server → client", () => {
    it("a tool result carrying an AWS key (JSON): the client gets a policy error for its id instead", async () => {
      const req = call("lookup");
      const res = await client.post(url, req);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("application/json");
      expect(res.json).toEqual({
        jsonrpc: "2.0",
        id: req.id,
        error: {
          code: -32051,
          message: "blocked by mcp-wiretap policy: detector:secrets",
          data: { rules: [{ name: "detector:secrets", reason: "secrets: aws_access_key_id (1 finding)" }] },
        },
      });
      expect(Number(res.headers["content-length"])).toBe(res.body.length);
      expect(res.text).not.toContain(AWS_KEY_ID);
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === req.id && r.direction === "server_to_client", { what: "response record" });
      expect(rec).toMatchObject({ kind: "response", method: "tools/call", tool: "lookup" });
      expect(decisionOf(rec)).toMatchObject({
        action: "deny",
        enforced: true,
        effect: "replaced by a policy error",
        rules: [{ name: "detector:secrets", action: "deny", findings: [{ type: "aws_access_key_id", path: "/result/content/0/text" }] }],
      });
    });

    it("event-stream form: allowed events pass byte for byte, a denied notification is dropped, a denied response is replaced (event id kept)", async () => {
      const req = call("lookup");
      const progress = event({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p1", progress: 1, total: 2 } }, "e1");
      const leakyLog = event({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `key=${AWS_KEY_ID}` } }, "e2");
      mcp.setScript((m) => ({ kind: "sse", events: progress + leakyLog + event(leakResult(m.id), "e3") }));
      const res = await client.post(url, req);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("text/event-stream");
      expect(res.text).not.toContain(AWS_KEY_ID);
      const events = sseEvents(res.text);
      expect(events).toHaveLength(3);
      expect(`${events[0]}\n\n`).toBe(progress);
      expect(events[1]).toBe(": mcp-wiretap policy blocked a message");
      expect(events[2]).toMatch(/^event: message\nid: e3\ndata: /);
      expect(sseData(res.text)).toEqual([
        { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p1", progress: 1, total: 2 } },
        { jsonrpc: "2.0", id: req.id, error: expect.objectContaining({ code: -32051, message: "blocked by mcp-wiretap policy: detector:secrets" }) },
      ]);
      const note = await proxy.waitForRecord((r) => isRpc(r) && r.method === "notifications/message" && r.sseEventId === "e2", { what: "notification record" });
      expect(decisionOf(note)).toMatchObject({ action: "deny", enforced: true, effect: "dropped" });
      const resp = await proxy.waitForRecord((r) => isRpc(r) && r.id === req.id && r.direction === "server_to_client", { what: "response record" });
      expect(decisionOf(resp)).toMatchObject({ action: "deny", enforced: true, effect: "replaced by a policy error" });
    });

    it("a tools/list with a poisoned description: that tool is removed, the others remain, the record says which", async () => {
      const req = { jsonrpc: "2.0", id: nextId++, method: "tools/list", params: {} };
      const res = await client.post(url, req);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ jsonrpc: "2.0", id: req.id, result: { tools: CLEAN_TOOLS } });
      expect(Number(res.headers["content-length"])).toBe(res.body.length);
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === req.id && r.direction === "server_to_client", { what: "tools/list record" });
      const d = decisionOf(rec);
      expect(d).toMatchObject({ action: "deny", enforced: true, effect: "removed tools: daily_fact" });
      expect(d.rules.map((r) => r.name)).toEqual(["detector:poisoning"]);
      expect(new Set(d.rules[0]!.findings!.map((f) => f.type))).toEqual(new Set(["important_tag", "before_using_read", "read_sensitive_file", "conceal_from_user", "exfiltration"]));
      for (const f of d.rules[0]!.findings!) expect(f.path).toBe("/result/tools/1/description");
    });

    it("a server request that is denied is dropped (an SSE comment in its place)", async () => {
      const req = call("ask");
      const sampling = event({ jsonrpc: "2.0", id: "srv-1", method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: `token ${AWS_KEY_ID}` } }], maxTokens: 5 } }, "s1");
      const answer = event({ jsonrpc: "2.0", id: req.id, result: { content: [] } }, "s2");
      mcp.setScript(() => ({ kind: "sse", events: sampling + answer }));
      const res = await client.post(url, req);
      expect(sseEvents(res.text)).toEqual([": mcp-wiretap policy blocked a message", answer.slice(0, -2)]);
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === "srv-1", { what: "sampling record" });
      expect(rec).toMatchObject({ direction: "server_to_client", kind: "request" });
      expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true, effect: "dropped" });
    });
  });

  describe("client → server", () => {
    it("a denied request is not forwarded: JSON error for a client that accepts JSON, an event stream for one that accepts only SSE", async () => {
      const before = received("tools/call");
      const req = call("delete_everything", { confirm: true });
      const res = await client.post(url, req);
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toBe("application/json");
      expect(res.json).toEqual({
        jsonrpc: "2.0",
        id: req.id,
        error: { code: -32051, message: "blocked by mcp-wiretap policy: no-delete", data: { rules: [{ name: "no-delete", reason: "destructive" }] } },
      });
      const sseOnly = call("delete_everything");
      const res2 = await client.post(url, sseOnly, { accept: "text/event-stream" });
      expect(res2.headers["content-type"]).toBe("text/event-stream");
      expect(sseData(res2.text)).toEqual([{ jsonrpc: "2.0", id: sseOnly.id, error: expect.objectContaining({ code: -32051 }) }]);
      expect(received("tools/call")).toBe(before);
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === req.id, { what: "request record" });
      expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true, effect: "not forwarded; the client got a policy error" });
      // The rule, and (flags accumulate) the schema detector: the server never listed this tool.
      expect(decisionOf(rec).rules.map((r) => [r.name, (r as { action?: string }).action])).toEqual([
        ["no-delete", "deny"],
        ["detector:schema", "flag"],
      ]);
      // The proxy answered: the http record says so.
      const http = await proxy.waitForRecord((r) => r.event === "http" && r.flow === rec.flow, { what: "http record" });
      expect(http).toMatchObject({ status: 200 });
    });

    it("a credential in a request's arguments is denied the same way", async () => {
      const before = received("tools/call");
      const res = await client.post(url, call("echo", { message: `here: ${AWS_KEY_ID}` }));
      expect((res.json as { error: { message: string } }).error.message).toBe("blocked by mcp-wiretap policy: detector:secrets");
      expect(received("tools/call")).toBe(before);
    });

    it("a denied notification: 202 to the client, nothing to the server", async () => {
      const before = up.requests.length;
      const res = await client.post(url, { jsonrpc: "2.0", method: "notifications/telemetry", params: { n: 1 } });
      expect(res.status).toBe(202);
      expect(res.body.length).toBe(0);
      expect(up.requests.length).toBe(before);
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.method === "notifications/telemetry", { what: "notification record" });
      expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true, effect: "not forwarded" });
      // An allowed notification still goes through.
      const ok = await client.post(url, { jsonrpc: "2.0", method: "notifications/initialized" });
      expect(ok.status).toBe(202);
      expect(up.requests.length).toBe(before + 1);
    });

    it("a denied client response (to a server request) reaches the server as a policy error", async () => {
      const before = up.requests.length;
      const res = await client.post(url, { jsonrpc: "2.0", id: "srv-7", result: { roots: [{ uri: "file:///x", name: `key ${AWS_KEY_ID}` }] } });
      expect(res.status).toBe(202);
      expect(up.requests.length).toBe(before + 1);
      const got = up.requests.at(-1)!;
      expect(got.body.toString()).not.toContain(AWS_KEY_ID);
      expect(got.json).toEqual({
        jsonrpc: "2.0",
        id: "srv-7",
        error: { code: -32051, message: "blocked by mcp-wiretap policy: detector:secrets", data: { rules: [{ name: "detector:secrets", reason: "secrets: aws_access_key_id (1 finding)" }] } },
      });
      expect(Number(got.headers["content-length"])).toBe(got.body.length);
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === "srv-7", { what: "client response record" });
      expect(decisionOf(rec)).toMatchObject({ enforced: true, effect: "replaced by a policy error to the server" });
    });

    it("batches: one denied request blocks the whole batch; every request in it gets an error", async () => {
      const before = up.requests.length;
      const ok = call("echo", { message: "fine" });
      const bad = call("delete_everything");
      const res = await client.post(url, [ok, bad, { jsonrpc: "2.0", method: "notifications/initialized" }]);
      expect(res.status).toBe(200);
      expect(res.json).toEqual([
        { jsonrpc: "2.0", id: ok.id, error: expect.objectContaining({ code: -32051, message: "blocked by mcp-wiretap policy: no-delete" }) },
        { jsonrpc: "2.0", id: bad.id, error: expect.objectContaining({ code: -32051, message: "blocked by mcp-wiretap policy: no-delete" }) },
      ]);
      expect(up.requests.length).toBe(before);
      // An allowed batch passes.
      const fine = await client.post(url, [call("echo"), call("add")]);
      expect(Array.isArray(fine.json) && fine.json.length).toBe(2);
      expect(up.requests.length).toBe(before + 1);
    });

    it("a request body over --max-inspect-bytes is refused with 413 and never forwarded", async () => {
      const before = up.requests.length;
      const res = await client.post(url, call("echo", { message: "x".repeat(MAX_INSPECT) }));
      expect(res.status).toBe(413);
      expect(res.text).toContain("larger than --max-inspect-bytes");
      expect(up.requests.length).toBe(before);
    });

    it("a response body over --max-inspect-bytes is not passed on: the request gets an error, and the record says why", async () => {
      const big = { jsonrpc: "2.0", id: 0, result: { content: [{ type: "text", text: `${AWS_KEY_ID} ${"y".repeat(MAX_INSPECT)}` }] } };
      const req = call("big");
      big.id = req.id;
      mcp.setScript(() => ({ kind: "json", value: big }));
      const res = await client.post(url, req);
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(AWS_KEY_ID);
      expect(JSON.parse(res.text)).toMatchObject({ jsonrpc: "2.0", id: req.id, error: { code: expect.any(Number) } });
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.kind === "invalid" && typeof r.reason === "string" && r.reason.includes("--max-inspect-bytes"), { what: "invalid record" });
      expect(rec).toMatchObject({ direction: "server_to_client", reason: "response larger than --max-inspect-bytes: not passed on (enforce mode cannot judge it)", decision: { action: "deny", enforced: true } });
    });

    it("a server that compresses anyway: a denied JSON response is still replaced (sent as identity); an allowed one passes as sent", async () => {
      const req = call("lookup");
      mcp.setScript((m) => ({ kind: "gzip", value: leakResult(m.id) }));
      const res = await client.post(url, req);
      expect(res.headers["content-encoding"]).toBeUndefined();
      expect(Number(res.headers["content-length"])).toBe(res.body.length);
      expect(res.json).toEqual({ jsonrpc: "2.0", id: req.id, error: expect.objectContaining({ code: -32051, message: "blocked by mcp-wiretap policy: detector:secrets" }) });
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === req.id && r.direction === "server_to_client", { what: "response record" });
      expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true, effect: "replaced by a policy error" });

      const ok = call("echo");
      mcp.setScript((m) => ({ kind: "gzip", value: { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "fine" }] } } }));
      const res2 = await client.post(url, ok);
      expect(res2.headers["content-encoding"]).toBe("gzip");
      expect(res2.body.equals(mcp.sent.at(-1)!)).toBe(true);
    });

    it("a denied request sent under another content type (text/plain) is judged and not forwarded either", async () => {
      const before = received("tools/call");
      const req = call("delete_everything");
      const res = await client.post(url, JSON.stringify(req), { "content-type": "text/plain" });
      expect(res.json).toEqual({ jsonrpc: "2.0", id: req.id, error: expect.objectContaining({ code: -32051, message: "blocked by mcp-wiretap policy: no-delete" }) });
      expect(received("tools/call")).toBe(before);
      // Not JSON at all, on an exchange without MCP headers: not MCP, forwarded unchanged.
      const other = await client.post(`${up.url}/upload`, "just some text", { "content-type": "text/plain" });
      expect(other.status).toBe(404);
      expect(up.requests.at(-1)!.body.toString()).toBe("just some text");
    });

    it("a denied request padded past --max-inspect-bytes under another content type is refused too; a large upload that is not JSON passes", async () => {
      const before = received("tools/call");
      const req = JSON.stringify(call("delete_everything"));
      for (const body of [req + " ".repeat(MAX_INSPECT), " ".repeat(MAX_INSPECT) + req]) {
        const res = await client.post(url, body, { "content-type": "text/plain" });
        expect(res.status).toBe(413);
        expect(received("tools/call")).toBe(before);
      }
      const upload = Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(MAX_INSPECT * 2, 7)]);
      const other = await client.post(`${up.url}/upload`, upload, { "content-type": "application/zip" });
      expect(other.status).toBe(404);
      expect(up.requests.at(-1)!.body.equals(upload)).toBe(true);
    });

    it("an event stream the server compresses anyway is decoded, judged event by event and sent as identity", async () => {
      const req = call("lookup");
      const progress = event({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p1", progress: 1 } }, "e-0");
      mcp.setScript((m) => ({ kind: "gzip-sse", events: progress + event(leakResult(m.id), "e-1") }));
      const res = await client.post(url, req);
      expect(res.headers["content-encoding"]).toBeUndefined();
      expect(res.text).not.toContain(AWS_KEY_ID);
      expect(sseEvents(res.text)[0]).toBe(progress.slice(0, -2));
      expect(sseData(res.text)[1]).toEqual({ jsonrpc: "2.0", id: req.id, error: expect.objectContaining({ code: -32051, message: "blocked by mcp-wiretap policy: detector:secrets" }) });
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === req.id && r.direction === "server_to_client", { what: "response record" });
      expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true, effect: "replaced by a policy error" });
      expect(rec.readability).toBeUndefined();
    });

    it("a compressed event stream that breaks mid-way ends there: nothing undecoded reaches the client", async () => {
      const req = call("echo");
      const note = event({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "x".repeat(2000) } });
      const gz = gzipSync(note.repeat(200), { level: 0 });
      const broken = Buffer.concat([gz.subarray(0, gz.length - 8), Buffer.from("garbage!")]);
      mcp.setScript(() => ({ kind: "raw", body: broken, headers: { "content-type": "text/event-stream", "content-encoding": "gzip" } }));
      const res = await client.post(url, req);
      expect(res.headers["content-encoding"]).toBeUndefined();
      expect(res.text.length).toBeGreaterThan(0);
      // Only whole decoded events: no compressed byte, no part of the trailer.
      expect(res.body.includes(Buffer.from("garbage!"))).toBe(false);
      expect(res.body.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b]))).toBe(false);
      // A cut-off last event is judged as one (not JSON: dropped, with a comment saying so).
      for (const e of sseEvents(res.text)) expect(e).toMatch(/^(event: message\ndata: \{|: mcp-wiretap policy blocked a message$)/);
      await proxy.waitForRecord((r) => isRpc(r) && r.kind === "invalid" && String(r.reason).includes("the rest of the stream was not sent"), { what: "broken stream record" });
    });

    it("Accept-Encoding is forced to identity on MCP requests", async () => {
      await client.post(url, call("echo"), { "accept-encoding": "gzip, br" });
      expect(up.requests.at(-1)!.headers["accept-encoding"]).toBe("identity");
    });
  });

  it("the log never carries the key: findings give its kind and place, payloads are masked", () => {
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(AWS_KEY_ID);
  });
});

describe("enforce mode with removeDeniedTools: false", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  const scenario = wireScenario("mode: enforce\ndetectors: { poisoning: deny }\nremoveDeniedTools: false\n");
  beforeAll(() => void ({ up, proxy, client } = scenario));

  it("a tools/list with a poisoned tool is replaced by a policy error", async () => {
    const res = await client.post(`${up.url}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(res.json).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32051,
        message: "blocked by mcp-wiretap policy: detector:poisoning",
        data: { rules: [{ name: "detector:poisoning", reason: expect.stringMatching(/^poisoning: .*important_tag/) }] },
      },
    });
    const rec = await proxy.waitForRecord((r) => isRpc(r) && r.id === 1 && r.direction === "server_to_client", { what: "tools/list record" });
    expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true, effect: "replaced by a policy error" });
  });
});
