/**
 * Requests that never get an answer are reported, once, with the reason: the stream ended, the session
 * ended, the proxy stopped, the table was full. Same ids in different sessions never get mixed up.
 */
import { mkdtemp, rm } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Correlator, type Direction, type PendingRequest, type Unanswered } from "../../src/mcp/correlator.js";
import type { RpcEvent } from "../../src/mcp/rpc-event.js";
import type { SessionRecord } from "../../src/mcp/sessions.js";
import { McpTracker, type TrackedContext } from "../../src/mcp/tracker.js";
import { type TestProxy, startTestProxy } from "../helpers/proxy-harness.js";
import { type ScriptedUpstream, accepted, json, rpcResult, sseEvent, sseHead, startScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { type RawClient, isRpc, rawClient, readUntil, rpcOn } from "./raw-client.js";

const request = (id: string | number, method: string, params?: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });

describe("unanswered requests, through the proxy", () => {
  let upstream: ScriptedUpstream;
  let proxy: TestProxy;
  let client: RawClient;
  const held = new Map<string, ServerResponse>();

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    proxy = await startTestProxy();
    client = rawClient(proxy);
    upstream.route("POST", "*", (req, res) => {
      const msg = req.json as { id: number; method: string; params?: { name?: string } };
      const name = msg.params?.name;
      sseHead(res);
      res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `started ${name}` } }));
      if (name === "ends-early") res.end(); // no response, no SSE ids: nothing can answer it any more
      else held.set(name ?? "", res); // held open until the test lets go
    });
    upstream.route("DELETE", "*", (_req, res) => {
      res.writeHead(200, { "content-length": "0" }).end();
    });
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await upstream?.close();
  });

  it("reports a request whose POST response stream ends without a response", async () => {
    const r = await client.post(`${upstream.url}/u1/mcp`, request(1, "tools/call", { name: "ends-early", arguments: {} }), { "mcp-session-id": "sess-u1" });
    expect(await r.text()).toContain("started ends-early");
    const lost = await proxy.waitForRecord((x) => isRpc(x) && x.path === "/u1/mcp" && x.kind === "unanswered", { what: "unanswered" });
    expect(lost).toMatchObject({ id: 1, method: "tools/call", tool: "ends-early", session: "sess-u1", direction: "client_to_server", reason: "stream ended without a response" });
    expect(lost.latencyMs as number).toBeGreaterThanOrEqual(0);
    expect(rpcOn(await proxy.records(), "/u1/mcp").map((x) => x.kind)).toEqual(["request", "notification", "unanswered"]);
  });

  it("reports a request still pending when its session is DELETEd, once", async () => {
    const controller = new AbortController();
    const r = await client.post(`${upstream.url}/u2/mcp`, request(2, "tools/call", { name: "held-u2", arguments: {} }), { "mcp-session-id": "sess-u2" }, controller.signal);
    const reader = r.body!.getReader();
    await readUntil(reader, (t) => t.includes("started held-u2"));
    const del = await client.agent.request({ origin: upstream.url, path: "/u2/mcp", method: "DELETE", headers: { "mcp-session-id": "sess-u2" } });
    expect(del.statusCode).toBe(200);
    await del.body.dump();
    const lost = await proxy.waitForRecord((x) => isRpc(x) && x.path === "/u2/mcp" && x.kind === "unanswered", { what: "unanswered" });
    expect(lost).toMatchObject({ id: 2, method: "tools/call", tool: "held-u2", session: "sess-u2", reason: "session ended (deleted)" });
    const end = await proxy.waitForRecord((x) => x.event === "session" && x.session === "sess-u2" && x.phase === "end", { what: "session end" });
    expect(end.reason).toBe("deleted");
    // The held stream ends afterwards: the request is not reported a second time.
    held.get("held-u2")!.end();
    await readUntil(reader, () => false).catch(() => undefined);
    await proxy.waitForRecord((x) => x.event === "http" && x.path === "/u2/mcp" && x.method === "POST", { what: "POST http record" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(rpcOn(await proxy.records(), "/u2/mcp").filter((x) => x.kind === "unanswered")).toHaveLength(1);
  });

  it("ends a session answered 404 (expired) and reports its pending requests", async () => {
    upstream.route("POST", "/u6/mcp", (req, res) => {
      const msg = req.json as { id: number; params?: { name?: string } };
      if (msg.params?.name === "held-u6") {
        sseHead(res);
        res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "started held-u6" } }, { id: "u6-1" }));
        held.set("held-u6", res);
        return;
      }
      json(res, { jsonrpc: "2.0", id: msg.id, error: { code: -32001, message: "Session not found" } }, {}, 404);
    });
    const headers = { "mcp-session-id": "sess-u6", "mcp-protocol-version": "2025-11-25" };
    const r1 = await client.post(`${upstream.url}/u6/mcp`, request(61, "tools/call", { name: "held-u6", arguments: {} }), headers);
    await readUntil(r1.body!.getReader(), (t) => t.includes("started held-u6"));
    const r2 = await client.post(`${upstream.url}/u6/mcp`, request(62, "tools/list"), headers);
    expect(r2.status).toBe(404);
    await r2.arrayBuffer();
    const end = await proxy.waitForRecord((x) => x.event === "session" && x.session === "sess-u6" && x.phase === "end", { what: "session end" });
    expect(end.reason).toBe("expired (404)");
    const lost = await proxy.waitForRecord((x) => isRpc(x) && x.id === 61 && x.kind === "unanswered", { what: "unanswered 61" });
    expect(lost).toMatchObject({ session: "sess-u6", reason: "session ended (expired (404))", protocolVersion: "2025-11-25" });
    held.get("held-u6")!.end();
  });

  it("reports what is still pending when the proxy stops", async () => {
    // The harness deletes its folder on stop: keep the log elsewhere, to read it afterwards.
    const dir = await mkdtemp(path.join(os.tmpdir(), "wiretap-stop-"));
    const own = await startTestProxy({ graceMs: 100, logFile: path.join(dir, "log.ndjson") });
    const ownClient = rawClient(own);
    try {
      // A sessionful request on a resumable stream (an SSE id: it could still be answered on a later GET) ...
      upstream.route("POST", "/u3/mcp", (req, res) => {
        sseHead(res);
        res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "primed" } }, { id: "p1" }));
        held.set("u3", res);
      });
      const r3 = await ownClient.post(`${upstream.url}/u3/mcp`, request(3, "tools/call", { name: "held-u3", arguments: {} }), { "mcp-session-id": "sess-u3" });
      await readUntil(r3.body!.getReader(), (t) => t.includes("primed"));
      // ... and a legacy GET stream with a POSTed request that is still waiting.
      let legacyStream: ServerResponse | undefined;
      upstream.route("GET", "/u4/sse", (_req, res) => {
        sseHead(res);
        res.write("event: endpoint\ndata: /u4/messages?sessionId=s4\n\n");
        legacyStream = res;
      });
      upstream.route("POST", "/u4/messages", (_req, res) => accepted(res));
      const stream = await ownClient.get(`${upstream.url}/u4/sse`);
      await readUntil(stream.body!.getReader(), (t) => t.includes("\n\n"));
      const p4 = await ownClient.post(`${upstream.url}/u4/messages?sessionId=s4`, request(4, "resources/read", { uri: "file:///x" }));
      expect(p4.status).toBe(202);
      await p4.arrayBuffer();
      // ... and a stateless request on a stream without ids: the proxy's own shutdown cuts it, not the client.
      const r5 = await ownClient.post(`${upstream.url}/u5/mcp`, request(5, "tools/call", { name: "held-u5", arguments: {} }), {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "held-u5",
      });
      await readUntil(r5.body!.getReader(), (t) => t.includes("started held-u5"));
      await own.waitForRecords((x) => isRpc(x) && x.kind === "request", 3, { what: "the three requests" });
      expect(legacyStream).toBeDefined();

      await own.stop("test");
      const records = await own.records();
      const lost = records.filter((x) => isRpc(x) && x.kind === "unanswered");
      expect(lost).toHaveLength(3);
      expect(lost.find((x) => x.id === 5)).toMatchObject({ method: "tools/call", session: null, protocolVersion: "2026-07-28", reason: "proxy stopped" });
      expect(lost.find((x) => x.id === 3)).toMatchObject({ method: "tools/call", session: "sess-u3", reason: "proxy stopped" });
      expect(lost.find((x) => x.id === 4)).toMatchObject({ method: "resources/read", session: "/u4/messages?sessionId=s4", transport: "http+sse", reason: "proxy stopped" });
      const ends = records.filter((x) => x.event === "session" && x.phase === "end");
      expect(ends.map((x) => [x.session, x.reason])).toEqual(
        expect.arrayContaining([
          ["sess-u3", "proxy stopped"],
          ["/u4/messages?sessionId=s4", "proxy stopped"],
        ]),
      );
    } finally {
      await ownClient.close();
      await own.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// -----------------------------------------------------------------------------------------------------
// The correlation table itself, and the tracker around it, without any network.

function pending(id: string | number, session: string | null, over: Partial<PendingRequest> = {}): PendingRequest {
  return {
    server: "example.test:443",
    session,
    direction: "client_to_server",
    id,
    method: "tools/call",
    tool: "t",
    flow: `flow-${String(id)}`,
    path: "/mcp",
    transport: "streamable-http",
    startedAt: 0,
    peer: "client 127.0.0.1",
    progressToken: undefined,
    ...over,
  };
}

describe("Correlator", () => {
  it("is bounded: the oldest pending requests are evicted and reported with reason evicted", () => {
    const lost: Unanswered[] = [];
    const c = new Correlator({ maxPending: 3, maxPendingBytes: 1 << 20, peerShareDivisor: 1 }, (u) => lost.push(u));
    for (let i = 1; i <= 5; i++) c.add(pending(i, "s", { progressToken: `tok-${i}` }));
    expect(c.size).toBe(3);
    expect(lost.map((u) => [u.id, u.reason])).toEqual([
      [1, "evicted"],
      [2, "evicted"],
    ]);
    expect(c.answer("example.test:443", "s", "client_to_server", 1)).toBeUndefined();
    expect(c.byProgressToken("example.test:443", "s", "client_to_server", "tok-1")).toBeUndefined();
    expect(c.byProgressToken("example.test:443", "s", "client_to_server", "tok-4")?.id).toBe(4);
    expect(c.answer("example.test:443", "s", "client_to_server", 5)?.id).toBe(5);
    expect(c.size).toBe(2);
  });

  it("keeps the same id apart across sessions, directions, servers and types", () => {
    const lost: Unanswered[] = [];
    const c = new Correlator({ maxPending: 100, maxPendingBytes: 1 << 20 }, (u) => lost.push(u));
    c.add(pending(1, "A", { method: "tools/list" }));
    c.add(pending(1, "B", { method: "prompts/list" }));
    c.add(pending(1, "A", { method: "sampling/createMessage", direction: "server_to_client" }));
    c.add(pending("1", "A", { method: "resources/list" }));
    c.add(pending(1, "A", { method: "ping", server: "other.test:443" }));
    c.add(pending(1, null, { method: "initialize" }));
    expect(lost).toEqual([]);
    const answer = (session: string | null, direction: Direction, id: string | number, server = "example.test:443") =>
      c.answer(server, session, direction, id)?.method;
    expect(answer("B", "client_to_server", 1)).toBe("prompts/list");
    expect(answer("A", "server_to_client", 1)).toBe("sampling/createMessage");
    expect(answer("A", "client_to_server", "1")).toBe("resources/list");
    expect(answer("A", "client_to_server", 1)).toBe("tools/list");
    expect(answer("A", "client_to_server", 1, "other.test:443")).toBe("ping");
    expect(answer(null, "client_to_server", 1)).toBe("initialize");
    expect(c.size).toBe(0);
  });

  it("reports an id reused in the same session before its answer", () => {
    const lost: Unanswered[] = [];
    const c = new Correlator({ maxPending: 100, maxPendingBytes: 1 << 20 }, (u) => lost.push(u));
    c.add(pending(7, "s", { method: "first" }));
    c.add(pending(7, "s", { method: "second" }));
    expect(lost.map((u) => [u.method, u.reason])).toEqual([["first", "id_reused"]]);
    expect(c.answer("example.test:443", "s", "client_to_server", 7)?.method).toBe("second");
  });
});

describe("McpTracker", () => {
  const ctx = (session: string | null, direction: Direction, flow = "f"): TrackedContext => ({
    flow,
    transport: "streamable-http",
    server: "example.test:443",
    path: "/mcp",
    session,
    protocolVersion: "2025-11-25",
    direction,
    scope: session ?? `flow:${flow}`,
  });
  const collect = (maxPending: number) => {
    const rpc: RpcEvent[] = [];
    const sessions: SessionRecord[] = [];
    let t = 1000;
    const tracker = new McpTracker({ rpc: (e) => rpc.push(e), session: (r) => sessions.push(r) }, { maxPending, maxSessions: 10, peerShareDivisor: 1 }, () => (t += 10));
    return { rpc, sessions, tracker };
  };

  it("writes an unanswered record, reason evicted, for a request pushed out of a full table", () => {
    const { rpc, tracker } = collect(2);
    for (const id of [1, 2, 3]) tracker.message(ctx("s", "client_to_server"), request(id, "tools/call", { name: `t${id}` }), 10);
    const lost = rpc.filter((e) => e.kind === "unanswered");
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ id: 1, method: "tools/call", tool: "t1", reason: "evicted", session: "s" });
    // The evicted request's late answer is still tied to it (its receiver reads it as that call's result, so it
    // is judged as one), and says it came after the request was reported unanswered.
    tracker.message(ctx("s", "server_to_client"), rpcResult(1), 10);
    expect(rpc.at(-1)).toMatchObject({ kind: "response", id: 1, method: "tools/call", tool: "t1", reason: expect.stringContaining("already reported unanswered") });
    // Once.
    tracker.message(ctx("s", "server_to_client"), rpcResult(1), 10);
    expect(rpc.at(-1)!.method).toBeUndefined();
  });

  it("does not confuse the same id in two sessions, nor client and server requests", () => {
    const { rpc, tracker } = collect(100);
    tracker.message(ctx("A", "client_to_server"), request(0, "tools/call", { name: "in-a" }), 10);
    tracker.message(ctx("B", "client_to_server"), request(0, "tools/call", { name: "in-b" }), 10);
    tracker.message(ctx("A", "server_to_client"), request(0, "roots/list"), 10);
    tracker.message(ctx("B", "server_to_client"), rpcResult(0), 10);
    tracker.message(ctx("A", "client_to_server"), rpcResult(0), 10);
    tracker.message(ctx("A", "server_to_client"), rpcResult(0), 10);
    const responses = rpc.filter((e) => e.kind === "response");
    expect(responses.map((e) => [e.session, e.direction, e.method, e.tool])).toEqual([
      ["B", "server_to_client", "tools/call", "in-b"],
      ["A", "client_to_server", "roots/list", undefined],
      ["A", "server_to_client", "tools/call", "in-a"],
    ]);
    for (const e of responses) expect(e.latencyMs).toBeGreaterThan(0);
    tracker.close();
    expect(rpc.filter((e) => e.kind === "unanswered")).toEqual([]);
  });

  it("keeps the session table bounded, for sessions started and sessions first seen mid-way alike", () => {
    const rpc: RpcEvent[] = [];
    const sessions: SessionRecord[] = [];
    const tracker = new McpTracker({ rpc: (e) => rpc.push(e), session: (r) => sessions.push(r) }, { maxPending: 100, maxSessions: 2, peerShareDivisor: 1 });
    // Mid-way sessions (the proxy never saw their initialize): e.g. a client inventing Mcp-Session-Id values.
    for (const s of ["m1", "m2", "m3", "m4"]) tracker.message(ctx(s, "client_to_server"), { jsonrpc: "2.0", method: "notifications/initialized" }, 10);
    expect(tracker.sessions.all().map((x) => x.session)).toEqual(["m3", "m4"]);
    // Sessions started by an initialize.
    for (const s of ["i1", "i2", "i3"]) {
      tracker.message({ ...ctx(null, "client_to_server", `init-${s}`) }, request(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "c", version: "0" } }), 10);
      tracker.message({ ...ctx(null, "server_to_client", `init-${s}`), assignedSession: s }, rpcResult(1, { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "s", version: "0" } }), 10);
    }
    expect(tracker.sessions.all().map((x) => x.session)).toEqual(["i2", "i3"]);
    const evicted = sessions.filter((r) => r.phase === "end").map((r) => [r.session, r.reason]);
    expect(evicted).toEqual([
      ["m1", "evicted"],
      ["m2", "evicted"],
      ["m3", "evicted"],
      ["m4", "evicted"],
      ["i1", "evicted"],
    ]);
  });

  it("reports pending requests at close with reason proxy stopped, and ends the sessions", () => {
    const { rpc, sessions, tracker } = collect(100);
    tracker.message(ctx("A", "client_to_server"), request(9, "prompts/get", { name: "p" }), 10);
    tracker.close();
    expect(rpc.at(-1)).toMatchObject({ kind: "unanswered", id: 9, method: "prompts/get", reason: "proxy stopped", protocolVersion: "2025-11-25" });
    expect(sessions.at(-1)).toMatchObject({ phase: "end", session: "A", reason: "proxy stopped", messages: 1 });
  });
});
