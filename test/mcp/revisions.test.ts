/**
 * Every MCP HTTP transport revision as it looks on the wire (see /work/shared/notes/wire.md), replayed
 * byte for byte by a scripted upstream and driven by a raw client through the proxy. Each test checks
 * what a user would check in the log.
 */
import type { ServerResponse } from "node:http";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LogRecord, type TestProxy, startTestProxy } from "../helpers/proxy-harness.js";
import { type ScriptedUpstream, accepted, json, rpcResult, sseEvent, sseHead, startScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { waitUntil } from "../helpers/wait-until.js";
import { type RawClient, isRpc, rawClient, readUntil, rpcOn } from "./raw-client.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let upstream: ScriptedUpstream;
let proxy: TestProxy;
let client: RawClient;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  proxy = await startTestProxy({ payloads: "full" });
  client = rawClient(proxy);
});
afterAll(async () => {
  await client?.close();
  await proxy?.stop();
  await upstream?.close();
});

const request = (id: string | number, method: string, params?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method,
  ...(params ? { params } : {}),
});
const notification = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: "2.0", method, ...(params ? { params } : {}) });

/**
 * A record is logged at warn for an invalid message, a header mismatch, or a policy decision other than
 * allow (the default policy's detectors may flag a tool the shared scripted server never listed).
 */
function expectQuietUnlessPolicy(r: LogRecord): void {
  const action = (r.decision as { action?: string } | undefined)?.action ?? "allow";
  if (action === "allow") expect(r.level).toBe("info");
}

function only<T>(list: T[], what: string): T {
  expect(list, what).toHaveLength(1);
  return list[0]!;
}

describe("2024-11-05 HTTP+SSE, Python-style endpoint", () => {
  it("resolves `?session_id=` against the GET URL and correlates POSTed requests with responses on the stream", async () => {
    let stream: ServerResponse | undefined;
    upstream.route("GET", "/py/sse", (_req, res) => {
      sseHead(res);
      res.write("event: endpoint\ndata: ?session_id=abc123\n\n");
      stream = res;
    });
    upstream.route("POST", "/py/sse", (req, res) => {
      expect(req.url).toBe("/py/sse?session_id=abc123");
      const msg = req.json as { id?: number; method: string };
      if (msg.id === undefined) return accepted(res);
      if (msg.method === "initialize") {
        accepted(res);
        const result = { protocolVersion: "2024-11-05", capabilities: { tools: {} }, serverInfo: { name: "py-scripted", version: "1.0" } };
        setTimeout(() => stream!.write(`event: message\r\ndata: ${JSON.stringify(rpcResult(msg.id!, result))}\r\n\r\n`), 20);
        return;
      }
      // A fast server: the answer is on the stream before the POST's own 202.
      stream!.write(`event: message\r\ndata: ${JSON.stringify(rpcResult(msg.id, { content: [{ type: "text", text: "done" }] }))}\r\n\r\n`);
      setTimeout(() => accepted(res), 20);
    });

    const getUrl = `${upstream.url}/py/sse`;
    const controller = new AbortController();
    const res = await client.get(getUrl, {}, controller.signal);
    const reader = res.body!.getReader();
    const seen = { text: "" };
    await readUntil(reader, (t) => t.includes("\n\n"), seen);
    const endpoint = /^data: (.*)$/m.exec(seen.text)![1]!;
    const postUrl = new URL(endpoint, getUrl).href;
    expect(postUrl).toBe(`${upstream.url}/py/sse?session_id=abc123`);

    const post = async (body: unknown) => {
      const r = await client.post(postUrl, body);
      expect(r.status).toBe(202);
      await r.arrayBuffer();
    };
    await post(request(0, "initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "raw-legacy", version: "0" } }));
    await readUntil(reader, (t) => t.includes('"id":0'), seen);
    await post(notification("notifications/initialized"));
    await post(request(1, "tools/call", { name: "lookup", arguments: { q: "x" } }));
    await readUntil(reader, (t) => t.includes('"id":1'), seen);
    controller.abort();
    await reader.cancel().catch(() => undefined);

    const session = "/py/sse?session_id=abc123";
    const end = await proxy.waitForRecord((r) => r.event === "session" && r.phase === "end" && r.session === session, { what: "legacy session end" });
    expect(end.reason).toBe("stream closed");
    const records = await proxy.records();
    const rpcs = rpcOn(records, "/py/sse");
    expect(rpcs).toHaveLength(5);
    for (const r of rpcs) {
      expect(r).toMatchObject({ transport: "http+sse", session, protocolVersion: "2024-11-05", server: upstream.server });
    }
    const call = only(rpcs.filter((r) => r.kind === "request" && r.method === "tools/call"), "tools/call request");
    const answer = only(rpcs.filter((r) => r.kind === "response" && r.id === 1), "tools/call response");
    expect(answer).toMatchObject({ method: "tools/call", tool: "lookup", direction: "server_to_client" });
    expect(answer.latencyMs as number).toBeGreaterThanOrEqual(0);
    expect(answer.flow).not.toBe(call.flow); // answered on the GET stream
    const init = only(rpcs.filter((r) => r.kind === "response" && r.id === 0), "initialize response");
    expect(init.latencyMs as number).toBeGreaterThanOrEqual(15);
    const start = only(records.filter((r) => r.event === "session" && r.phase === "start" && r.session === session), "session start");
    expect(start).toMatchObject({ transport: "http+sse", protocolVersion: "2024-11-05", clientInfo: { name: "raw-legacy" }, serverInfo: { name: "py-scripted" } });
    expect(rpcs.filter((r) => r.kind === "unanswered" || r.kind === "invalid")).toEqual([]);
  });
});

describe("2024-11-05 HTTP+SSE, endpoint with a credential in its query", () => {
  it("keeps the secret out of the log, session fields included", async () => {
    let stream: ServerResponse | undefined;
    upstream.route("GET", "/keyed/sse", (_req, res) => {
      sseHead(res);
      res.write("event: endpoint\ndata: /keyed/messages?sessionId=s9&api_key=SECRET-KEY-9\n\n");
      stream = res;
    });
    upstream.route("POST", "/keyed/messages", (req, res) => {
      accepted(res);
      const msg = req.json as { id: number; method: string };
      const result = { protocolVersion: "2024-11-05", capabilities: {}, serverInfo: { name: "keyed", version: "1" } };
      setTimeout(() => stream!.write(sseEvent(rpcResult(msg.id, result), { event: "message" })), 10);
    });
    const getUrl = `${upstream.url}/keyed/sse`;
    const controller = new AbortController();
    const res = await client.get(getUrl, {}, controller.signal);
    const reader = res.body!.getReader();
    const seen = { text: "" };
    await readUntil(reader, (t) => t.includes("\n\n"), seen);
    const postUrl = new URL(/^data: (.*)$/m.exec(seen.text)![1]!, getUrl).href;
    const posted = await client.post(postUrl, request(0, "initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "k", version: "0" } }));
    await posted.arrayBuffer();
    await readUntil(reader, (t) => t.includes('"id":0'), seen);
    controller.abort();
    await reader.cancel().catch(() => undefined);
    const end = await proxy.waitForRecord((r) => r.event === "session" && r.phase === "end" && String(r.session).startsWith("/keyed/"), { what: "session end" });
    expect(end.session).toBe("/keyed/messages?sessionId=s9&api_key=[redacted]");
    const records = (await proxy.records()).filter((r) => JSON.stringify(r).includes("/keyed/"));
    expect(records.filter((r) => r.event === "rpc")).toHaveLength(2);
    expect(rpcOn(records, "/keyed/messages")[0]).toMatchObject({ kind: "request", transport: "http+sse", session: end.session });
    expect(JSON.stringify(records)).not.toContain("SECRET-KEY-9");
  });
});

describe("2025-03-26 Streamable HTTP with batches", () => {
  it("matches each response of a reordered batch answer to its own request", async () => {
    upstream.route("POST", "/batch/mcp", (req, res) => {
      const body = req.json as Record<string, unknown> | Record<string, unknown>[];
      if (!Array.isArray(body)) {
        if (body.method !== "initialize") return accepted(res);
        return json(
          res,
          rpcResult(body.id as string, { protocolVersion: "2025-03-26", capabilities: { tools: {} }, serverInfo: { name: "batch-server", version: "1" } }),
          { "mcp-session-id": "sess-batch" },
        );
      }
      const answers = body.filter((m) => m.id !== undefined).map((m) => rpcResult(m.id as string, { answered: m.method }));
      json(res, answers.reverse());
    });
    const url = `${upstream.url}/batch/mcp`;
    const init = await client.post(url, request("init", "initialize", { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "raw-batch", version: "0" } }));
    expect(init.headers.get("mcp-session-id")).toBe("sess-batch");
    await init.json();
    const session = { "mcp-session-id": "sess-batch" };
    await (await client.post(url, notification("notifications/initialized"), session)).arrayBuffer();
    const batch = [request(1, "tools/list"), request("two", "prompts/list"), notification("notifications/roots/list_changed")];
    const answered = (await (await client.post(url, batch, session)).json()) as { id: unknown }[];
    expect(answered.map((a) => a.id)).toEqual(["two", 1]);

    await proxy.waitForRecords((r) => isRpc(r) && r.path === "/batch/mcp" && r.kind === "response", 3, { what: "batch responses" });
    const rpcs = rpcOn(await proxy.records(), "/batch/mcp");
    for (const r of rpcs) expect(r).toMatchObject({ protocolVersion: "2025-03-26", transport: "streamable-http" });
    const inBatch = rpcs.filter((r) => r.batch !== undefined);
    expect(inBatch).toHaveLength(5);
    const req1 = only(inBatch.filter((r) => r.kind === "request" && r.id === 1), "request 1");
    const req2 = only(inBatch.filter((r) => r.kind === "request" && r.id === "two"), "request two");
    const note = only(inBatch.filter((r) => r.kind === "notification"), "batched notification");
    expect(req1).toMatchObject({ method: "tools/list", batch: { index: 0, size: 3 }, session: "sess-batch" });
    expect(req2).toMatchObject({ method: "prompts/list", batch: { index: 1, size: 3 } });
    expect(note).toMatchObject({ method: "notifications/roots/list_changed", batch: { index: 2, size: 3 } });
    const res2 = only(inBatch.filter((r) => r.kind === "response" && r.id === "two"), "response two");
    const res1 = only(inBatch.filter((r) => r.kind === "response" && r.id === 1), "response 1");
    expect(res2).toMatchObject({ method: "prompts/list", batch: { index: 0, size: 2 }, result: { answered: "prompts/list" } });
    expect(res1).toMatchObject({ method: "tools/list", batch: { index: 1, size: 2 }, result: { answered: "tools/list" } });
    for (const r of [res1, res2]) expect(r.latencyMs as number).toBeGreaterThanOrEqual(0);
    // A batch member's size is its own JSON, not the whole body's.
    expect(req1.bytes as number).toBeLessThan(JSON.stringify(batch).length);
    const start = only((await proxy.records()).filter((r) => r.event === "session" && r.session === "sess-batch"), "session start");
    expect(start).toMatchObject({ phase: "start", protocolVersion: "2025-03-26", serverInfo: { name: "batch-server" }, clientInfo: { name: "raw-batch" } });
    expect(rpcs.filter((r) => r.kind === "unanswered" || r.kind === "invalid")).toEqual([]);
  });
});

describe("2025-06-18 MCP-Protocol-Version header", () => {
  it("is the protocolVersion of a session whose initialize the proxy never saw", async () => {
    upstream.route("POST", "/v0618/mcp", (req, res) => json(res, rpcResult((req.json as { id: number }).id, { tools: [] })));
    const r = await client.post(`${upstream.url}/v0618/mcp`, request(5, "tools/list"), { "mcp-session-id": "s-0618", "mcp-protocol-version": "2025-06-18" });
    await r.json();
    const [req, res] = await proxy.waitForRecords((x) => isRpc(x) && x.path === "/v0618/mcp", 2, { what: "2025-06-18 records" });
    expect(req).toMatchObject({ kind: "request", protocolVersion: "2025-06-18", session: "s-0618", method: "tools/list" });
    expect(res).toMatchObject({ kind: "response", protocolVersion: "2025-06-18", session: "s-0618", method: "tools/list", id: 5 });
  });
});

describe("2025-06-18 server requests on the GET stream, and cancellation", () => {
  it("matches a client's POSTed answer to the server's request, apart from the client's own request with the same id", async () => {
    let stream: ServerResponse | undefined;
    upstream.route("GET", "/srv/mcp", (_req, res) => {
      sseHead(res);
      stream = res;
    });
    upstream.route("POST", "/srv/mcp", (req, res) => {
      const msg = req.json as { id?: number; method?: string };
      if (msg.method === undefined) return accepted(res); // the client's answer
      json(res, rpcResult(msg.id!, { tools: [] }));
    });
    const url = `${upstream.url}/srv/mcp`;
    const headers = { "mcp-session-id": "sess-srv", "mcp-protocol-version": "2025-06-18" };
    const controller = new AbortController();
    const get = await client.get(url, headers, controller.signal);
    const reader = get.body!.getReader();
    await waitUntil(() => stream !== undefined, { what: "the GET stream" });
    stream!.write(sseEvent(request(0, "elicitation/create", { message: "Proceed?", requestedSchema: { type: "object", properties: {} } }), { event: "message", id: "g1" }));
    await readUntil(reader, (t) => t.includes("elicitation/create"));
    // The client's own request 0, then its answer to the server's request 0.
    await (await client.post(url, request(0, "tools/list"), headers)).json();
    const answered = await client.post(url, rpcResult(0, { action: "accept", content: {} }), headers);
    expect(answered.status).toBe(202);
    await answered.arrayBuffer();
    controller.abort();
    await reader.cancel().catch(() => undefined);

    await proxy.waitForRecords((r) => isRpc(r) && r.path === "/srv/mcp" && r.kind === "response", 2, { what: "both responses" });
    const rpcs = rpcOn(await proxy.records(), "/srv/mcp");
    const fromClient = only(rpcs.filter((r) => r.kind === "response" && r.direction === "client_to_server"), "client's answer");
    const fromServer = only(rpcs.filter((r) => r.kind === "response" && r.direction === "server_to_client"), "server's answer");
    expect(fromClient).toMatchObject({ id: 0, method: "elicitation/create", session: "sess-srv", protocolVersion: "2025-06-18" });
    expect(fromServer).toMatchObject({ id: 0, method: "tools/list", session: "sess-srv" });
    for (const r of [fromClient, fromServer]) expect(typeof r.latencyMs).toBe("number");
    expect(rpcs.filter((r) => r.kind === "unanswered")).toEqual([]);
  });

  it("links notifications/cancelled to its request, which is then not reported unanswered", async () => {
    let held: ServerResponse | undefined;
    upstream.route("POST", "/cancel/mcp", (req, res) => {
      const msg = req.json as { id?: number; method: string };
      if (msg.id === undefined) return accepted(res);
      sseHead(res);
      res.write(sseEvent(notification("notifications/message", { level: "info", data: "begun" })));
      held = res;
    });
    const url = `${upstream.url}/cancel/mcp`;
    const headers = { "mcp-session-id": "sess-cancel", "mcp-protocol-version": "2025-06-18" };
    const r = await client.post(url, request(9, "tools/call", { name: "long", arguments: {} }), headers);
    const reader = r.body!.getReader();
    await readUntil(reader, (t) => t.includes("begun"));
    const c = await client.post(url, notification("notifications/cancelled", { requestId: 9, reason: "user pressed stop" }), headers);
    expect(c.status).toBe(202);
    await c.arrayBuffer();
    held!.end(); // the server gives up on the stream without a response, as the spec allows
    await readUntil(reader, () => false).catch(() => undefined);
    const cancel = await proxy.waitForRecord((x) => isRpc(x) && x.path === "/cancel/mcp" && x.method === "notifications/cancelled", { what: "cancel" });
    expect(cancel).toMatchObject({ kind: "notification", direction: "client_to_server", related: { id: 9, method: "tools/call", tool: "long" } });
    await proxy.waitForRecord((x) => x.event === "http" && x.path === "/cancel/mcp" && x.status === 200, { what: "POST http record" });
    await sleep(30);
    expect(rpcOn(await proxy.records(), "/cancel/mcp").filter((x) => x.kind === "unanswered")).toEqual([]);
  });
});

describe("2025-11-25 priming event, polling and resumption", () => {
  it("keeps the request pending when the POST stream closes after a priming event, and matches the response on the resuming GET", async () => {
    let pendingId: number | undefined;
    let lastEventId: string | undefined;
    upstream.route("POST", "/poll/mcp", (req, res) => {
      pendingId = (req.json as { id: number }).id;
      sseHead(res);
      res.write("id: e1\ndata:\n\n");
      res.write("retry: 100\n\n");
      setTimeout(() => res.end(), 20); // closes WITHOUT the response
    });
    upstream.route("GET", "/poll/mcp", (req, res) => {
      lastEventId = req.headers["last-event-id"] as string;
      expect(req.headers["mcp-session-id"]).toBe("sess-poll");
      sseHead(res);
      res.write(sseEvent(rpcResult(pendingId!, { content: [{ type: "text", text: "late" }] }), { event: "message", id: "e2" }));
      setTimeout(() => res.end(), 20);
    });
    const url = `${upstream.url}/poll/mcp`;
    const headers = { "mcp-session-id": "sess-poll", "mcp-protocol-version": "2025-11-25" };
    const posted = await client.post(url, request(42, "tools/call", { name: "slow-thing", arguments: {} }), headers);
    const primed = await posted.text();
    expect(primed).toBe("id: e1\ndata:\n\nretry: 100\n\n");
    const postHttp = await proxy.waitForRecord((r) => r.event === "http" && r.path === "/poll/mcp" && r.method === "POST", { what: "POST http record" });
    await sleep(100); // the retry delay; the proxy has long finished with the POST exchange
    const resumed = await client.get(url, { ...headers, "last-event-id": "e1" });
    expect(await resumed.text()).toContain('"id":42');
    expect(lastEventId).toBe("e1");

    const answer = await proxy.waitForRecord((r) => isRpc(r) && r.path === "/poll/mcp" && r.kind === "response", { what: "resumed response" });
    expect(answer).toMatchObject({ id: 42, method: "tools/call", tool: "slow-thing", session: "sess-poll", sseEventId: "e2", protocolVersion: "2025-11-25" });
    expect(answer.flow).not.toBe(postHttp.flow);
    expect(answer.latencyMs as number).toBeGreaterThanOrEqual(100);
    await proxy.waitForRecord((r) => r.event === "http" && r.path === "/poll/mcp" && r.method === "GET", { what: "GET http record" });
    const rpcs = rpcOn(await proxy.records(), "/poll/mcp");
    expect(rpcs.map((r) => r.kind)).toEqual(["request", "response"]);
  });
});

describe("2026-07-28 stateless Streamable HTTP", () => {
  const V = "2026-07-28";
  const meta = { "io.modelcontextprotocol/protocolVersion": V, clientInfo: { name: "raw-stateless", version: "0" }, clientCapabilities: {} };
  const url = () => `${upstream.url}/stateless/mcp`;
  let listenClosed = false;
  let slowClosed = false;

  beforeAll(() => {
    upstream.route("POST", "/stateless/mcp", (req, res) => {
      const msg = req.json as { id: number | string; method: string; params?: { name?: string } };
      if (msg.method === "subscriptions/listen") {
        sseHead(res);
        let n = 0;
        const timer = setInterval(() => {
          n++;
          res.write(sseEvent(notification("notifications/resources/updated", { uri: `file:///watched/${n}` })));
        }, 15);
        res.once("close", () => {
          clearInterval(timer);
          listenClosed = true;
        });
        return;
      }
      if (msg.params?.name === "slow") {
        sseHead(res);
        res.write(sseEvent(notification("notifications/message", { level: "info", data: "working" })));
        res.once("close", () => (slowClosed = true)); // never answers
        return;
      }
      if (msg.params?.name === "needs-input") {
        return json(res, rpcResult(msg.id, { resultType: "input_required", inputRequests: { confirm: { method: "elicitation/create", params: {} } } }));
      }
      json(res, rpcResult(msg.id, { content: [{ type: "text", text: "ok" }] }));
    });
  });

  const call = (id: number | string, name: string, headers: Record<string, string>, withMeta = true) =>
    client.post(url(), request(id, "tools/call", { name, arguments: { n: 1 }, ...(withMeta ? { _meta: meta } : {}) }), headers);
  const recordsOf = async (id: number | string, count: number) =>
    proxy.waitForRecords((r) => isRpc(r) && r.path === "/stateless/mcp" && r.id === id, count, { what: `records of id ${id}` });

  it("has no session; matching Mcp-Method / Mcp-Name headers raise no flag", async () => {
    await (await call("s1", "echo", { "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "echo" })).json();
    const [req, res] = await recordsOf("s1", 2);
    for (const r of [req!, res!]) {
      expect(r).toMatchObject({ session: null, protocolVersion: V, transport: "streamable-http" });
      expect(r.headerMismatch).toBeUndefined();
      expectQuietUnlessPolicy(r);
    }
    expect(res).toMatchObject({ kind: "response", method: "tools/call", tool: "echo" });
    expect(typeof res!.latencyMs).toBe("number");
    // No session records in the stateless revision.
    expect((await proxy.records()).filter((r) => r.event === "session" && r.server === upstream.server && r.session === null)).toEqual([]);
  });

  it("accepts base64-encoded non-ASCII header values that match the body", async () => {
    const uri = "file:///tmp/café ✓.txt";
    const r = await client.post(url(), request("s1b", "resources/read", { uri, _meta: meta }), {
      "mcp-protocol-version": V,
      "mcp-method": "resources/read",
      "mcp-name": `=?base64?${Buffer.from(uri).toString("base64")}?=`,
    });
    await r.json();
    const [req] = await recordsOf("s1b", 2);
    expect(req!.headerMismatch).toBeUndefined();
    expectQuietUnlessPolicy(req!);
  });

  it("flags headers that disagree with the body (warn)", async () => {
    await (await call("s2", "echo", { "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "delete-everything" })).json();
    await (await call("s3", "echo", { "mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list", "mcp-name": "echo" })).json();
    const [req2] = await recordsOf("s2", 2);
    expect(req2).toMatchObject({ kind: "request", level: "warn", headerMismatch: [{ header: "Mcp-Name", headerValue: "delete-everything", bodyValue: "echo" }] });
    const [req3, res3] = await recordsOf("s3", 2);
    expect(req3!.level).toBe("warn");
    expect(req3!.headerMismatch).toEqual(
      expect.arrayContaining([
        { header: "Mcp-Method", headerValue: "tools/list", bodyValue: "tools/call" },
        { header: "MCP-Protocol-Version", headerValue: "2025-11-25", bodyValue: V },
      ]),
    );
    // The flag is on the request, where the mismatch is; the response is plain.
    expect(res3!.headerMismatch).toBeUndefined();
  });

  it("flags a missing Mcp-Method, or a missing Mcp-Name where the method needs one (warn, headerValue null)", async () => {
    await (await call("m1", "echo", { "mcp-protocol-version": V, "mcp-name": "echo" })).json();
    await (await call("m2", "echo", { "mcp-protocol-version": V, "mcp-method": "tools/call" })).json();
    await (await call("m3", "echo", {})).json(); // the version only in _meta: still the stateless revision
    const listed = await client.post(url(), request("m4", "tools/list", { _meta: meta }), { "mcp-protocol-version": V, "mcp-method": "tools/list" });
    await listed.json();
    const [m1] = await recordsOf("m1", 2);
    expect(m1).toMatchObject({ kind: "request", level: "warn", headerMismatch: [{ header: "Mcp-Method", headerValue: null, bodyValue: "tools/call" }] });
    const [m2] = await recordsOf("m2", 2);
    expect(m2).toMatchObject({ kind: "request", level: "warn", headerMismatch: [{ header: "Mcp-Name", headerValue: null, bodyValue: "echo" }] });
    const [m3] = await recordsOf("m3", 2);
    expect(m3!.headerMismatch).toEqual([
      { header: "Mcp-Method", headerValue: null, bodyValue: "tools/call" },
      { header: "Mcp-Name", headerValue: null, bodyValue: "echo" },
    ]);
    // tools/list has no Mcp-Name; earlier revisions have neither header.
    const [m4] = await recordsOf("m4", 2);
    expect(m4!.headerMismatch).toBeUndefined();
    await (await client.post(url(), request("m5", "tools/call", { name: "echo", arguments: {} }), { "mcp-protocol-version": "2025-11-25" })).json();
    const [m5] = await recordsOf("m5", 2);
    expect(m5!.headerMismatch).toBeUndefined();
  });

  it("takes the protocolVersion from _meta when there is no version header", async () => {
    await (await call("s4", "echo", { "mcp-method": "tools/call", "mcp-name": "echo" })).json();
    const [req, res] = await recordsOf("s4", 2);
    expect(req).toMatchObject({ kind: "request", protocolVersion: V, session: null });
    expect(res).toMatchObject({ kind: "response", protocolVersion: V, session: null });
  });

  it("records resultType input_required", async () => {
    await (await call("s5", "needs-input", { "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "needs-input" })).json();
    const [, res] = await recordsOf("s5", 2);
    expect(res).toMatchObject({ kind: "response", resultType: "input_required", tool: "needs-input" });
  });

  it("logs the notifications of a subscriptions/listen stream", async () => {
    const controller = new AbortController();
    const res = await client.post(url(), request("listen-1", "subscriptions/listen", { _meta: meta, notifications: ["resources/updated"] }), {
      "mcp-protocol-version": V,
      "mcp-method": "subscriptions/listen",
    }, controller.signal);
    const reader = res.body!.getReader();
    await readUntil(reader, (t) => (t.match(/resources\/updated/g) ?? []).length >= 3);
    const notes = await proxy.waitForRecords(
      (r) => isRpc(r) && r.path === "/stateless/mcp" && r.method === "notifications/resources/updated",
      3,
      { what: "listen notifications" },
    );
    for (const n of notes) {
      expect(n).toMatchObject({ kind: "notification", direction: "server_to_client", session: null, protocolVersion: V });
      // Tied to the listen request whose stream carries them.
      expect(n.related).toMatchObject({ id: "listen-1", method: "subscriptions/listen" });
      expect(typeof (n.related as { elapsedMs: number }).elapsedMs).toBe("number");
    }
    expect(new Set(notes.map((n) => n.flow)).size).toBe(1);
    controller.abort();
    await reader.cancel().catch(() => undefined);
    await waitUntil(() => listenClosed, { what: "the upstream to see the listener leave" });
  });

  it("reports a request whose SSE stream the client closed before the response as unanswered (a cancel), and closes the upstream", async () => {
    const controller = new AbortController();
    const res = await client.post(url(), request("s6", "tools/call", { name: "slow", arguments: {}, _meta: meta }), {
      "mcp-protocol-version": V,
      "mcp-method": "tools/call",
      "mcp-name": "slow",
    }, controller.signal);
    const reader = res.body!.getReader();
    await readUntil(reader, (t) => t.includes("working"));
    controller.abort();
    await reader.cancel().catch(() => undefined);
    const lost = await proxy.waitForRecord((r) => isRpc(r) && r.id === "s6" && r.kind === "unanswered", { what: "unanswered s6" });
    expect(lost).toMatchObject({ method: "tools/call", tool: "slow", session: null, direction: "client_to_server", protocolVersion: V });
    expect(lost.reason).toMatch(/clos.*stream|cancel/i);
    expect(lost.latencyMs as number).toBeGreaterThanOrEqual(0);
    await waitUntil(() => slowClosed, { what: "the proxy to close the upstream stream" });
  });
});

describe("Python-style event streams", () => {
  it("decodes CRLF line ends, `: ping` comments and multi-line data", async () => {
    upstream.route("POST", "/pystream/mcp", async (req, res) => {
      const id = (req.json as { id: number }).id;
      sseHead(res);
      res.write(": ping - 2025-11-25 10:00:00.000000+00:00\r\n\r\n");
      res.write('event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress",\r\ndata: "params":{"progressToken":"tok-7","progress":1,"total":2}}\r\n\r\n');
      await sleep(10);
      res.write(": ping\r\n\r\n");
      res.write(`event: message\r\ndata: {"jsonrpc":"2.0","id":${id},\r\ndata:"result":{"content":[{"type":"text","text":"naïve ✓\\nline two"}]}}\r\n\r\n`);
      res.end();
    });
    const r = await client.post(
      `${upstream.url}/pystream/mcp`,
      request(7, "tools/call", { name: "py-tool", arguments: {}, _meta: { progressToken: "tok-7" } }),
      { "mcp-session-id": "py-sess", "mcp-protocol-version": "2025-06-18" },
    );
    expect(await r.text()).toContain("\r\n: ping\r\n");
    await proxy.waitForRecord((x) => x.event === "http" && x.path === "/pystream/mcp", { what: "http record" });
    const answer = await proxy.waitForRecord((x) => isRpc(x) && x.path === "/pystream/mcp" && x.kind === "response", { what: "response" });
    const rpcs = rpcOn(await proxy.records(), "/pystream/mcp");
    expect(rpcs.map((x) => x.kind)).toEqual(["request", "notification", "response"]);
    expect(rpcs[1]).toMatchObject({ method: "notifications/progress", progressToken: "tok-7", related: { id: 7, method: "tools/call", tool: "py-tool" } });
    expect(answer).toMatchObject({ id: 7, method: "tools/call", tool: "py-tool", result: { content: [{ type: "text", text: "naïve ✓\nline two" }] } });
    expect(typeof answer.latencyMs).toBe("number");
  });
});

describe("compressed responses", () => {
  const cases = [
    { encoding: "gzip", type: "sse" },
    { encoding: "br", type: "sse" },
    { encoding: "gzip", type: "json" },
    { encoding: "br", type: "json" },
  ] as const;
  const compress = (encoding: string, bytes: Buffer) => (encoding === "gzip" ? gzipSync(bytes) : brotliCompressSync(bytes));

  it.each(cases)("decodes $encoding $type bodies for the log, and forwards the compressed bytes unchanged", async ({ encoding, type }) => {
    const path = `/z-${encoding}-${type}/mcp`;
    let sent = Buffer.alloc(0);
    upstream.route("POST", path, async (req, res) => {
      const id = (req.json as { id: number }).id;
      const response = rpcResult(id, { content: [{ type: "text", text: `${encoding} ✓ ${"x".repeat(2000)}` }] });
      const plain =
        type === "sse"
          ? sseEvent(notification("notifications/message", { level: "info", data: "compressed" }), { event: "message", id: "z1" }) +
            sseEvent(response, { event: "message", id: "z2" })
          : JSON.stringify(response);
      sent = compress(encoding, Buffer.from(plain));
      res.writeHead(200, { "content-type": type === "sse" ? "text/event-stream" : "application/json", "content-encoding": encoding });
      // In pieces, as a stream would arrive.
      const third = Math.ceil(sent.length / 3);
      for (let i = 0; i < sent.length; i += third) {
        res.write(sent.subarray(i, i + third));
        await sleep(5);
      }
      res.end();
    });
    // undici's `request` does not decode content-encoding: these are the bytes on the wire.
    const answer = await client.agent.request({
      origin: upstream.url,
      path,
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "accept-encoding": encoding, "mcp-session-id": `z-${encoding}-${type}` },
      body: JSON.stringify(request(9, "tools/call", { name: "zip", arguments: {} })),
    });
    const received = Buffer.from(await answer.body.arrayBuffer());
    expect(answer.headers["content-encoding"]).toBe(encoding);
    expect(received.equals(sent)).toBe(true);

    const res = await proxy.waitForRecord((r) => isRpc(r) && r.path === path && r.kind === "response", { what: `${encoding} ${type} response` });
    expect(res).toMatchObject({ id: 9, method: "tools/call", tool: "zip" });
    expect(JSON.stringify(res.result)).toContain(`${encoding} ✓`);
    if (type === "sse") {
      expect(res.sseEventId).toBe("z2");
      const note = rpcOn(await proxy.records(), path).filter((r) => r.kind === "notification");
      expect(note).toHaveLength(1);
    }
    await proxy.waitForRecord((r) => r.event === "http" && r.path === path, { what: "http record" });
    expect(rpcOn(await proxy.records(), path).filter((r) => r.kind === "invalid" || r.kind === "unanswered")).toEqual([]);
  });
});

describe("what is not MCP, and what is broken MCP", () => {
  it("logs only an http record for a JSON POST that is not JSON-RPC to a non-MCP path", async () => {
    upstream.route("POST", "/api/things", (_req, res) => json(res, { ok: true, items: [1, 2, 3] }));
    const r = await client.post(`${upstream.url}/api/things`, { hello: "world" });
    expect(await r.json()).toEqual({ ok: true, items: [1, 2, 3] });
    const http = await proxy.waitForRecord((x) => x.event === "http" && x.path === "/api/things", { what: "http record" });
    await sleep(50);
    const records = await proxy.records();
    expect(records.filter((x) => x.flow === http.flow)).toEqual([http]);
  });

  const cases: { label: string; type: string; body: string; reason: RegExp }[] = [
    { label: "not JSON", type: "application/json", body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":', reason: /json|parse|unexpected|end/i },
    { label: "JSON but not JSON-RPC", type: "application/json", body: '{"hello":"world","id":3}', reason: /jsonrpc/ },
    { label: "not JSON by its content type", type: "text/plain", body: "tools/call echo hi", reason: /not JSON \(content-type: text\/plain\)/ },
  ];
  it.each(cases)("marks a POST with Mcp-Session-Id whose body is $label as invalid, and forwards the bytes unchanged", async ({ label, type, body, reason }) => {
    const path = `/broken-${label.replace(/\W+/g, "-")}/mcp`;
    upstream.route("POST", path, (_req, res) => json(res, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }, {}, 400));
    const r = await client.post(`${upstream.url}${path}`, body, { "content-type": type, "mcp-session-id": "sess-broken" });
    expect(r.status).toBe(400);
    await r.arrayBuffer();
    const invalid = await proxy.waitForRecord((x) => isRpc(x) && x.path === path && x.kind === "invalid", { what: "invalid record" });
    expect(invalid).toMatchObject({ direction: "client_to_server", session: "sess-broken", level: "warn" });
    expect(invalid.reason).toMatch(reason);
    const got = upstream.requests.find((q) => q.url === path)!;
    expect(got.body.equals(Buffer.from(body))).toBe(true);
    expect(got.headers["content-type"]).toBe(type);
  });
});
