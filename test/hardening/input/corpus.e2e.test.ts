/**
 * A corpus of hostile bodies, end to end through the real proxy (in-process, `startTestProxy`) to a scripted
 * HTTPS upstream that writes exact bytes. For each case:
 * - the bytes are forwarded unchanged (the upstream received exactly what the client sent; the client
 *   received exactly what the upstream sent, content-type included);
 * - the exchange has its `http` record, and the `rpc` records say what was wrong (`invalid` with a reason,
 *   `unanswered`, ...);
 * - the proxy still serves a normal MCP request afterwards.
 */
import type { ServerResponse } from "node:http";
import type { ProxyAgent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type LogRecord, type TestProxy } from "../../helpers/proxy-harness.js";
import { rpcResult, sseHead, startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { expectWellFormedLog, fetchRaw, httpRecord, mcpHeaders, proxyAgent, rpcRecordsOn, sha256 } from "./input-kit.js";

const DEPTH = 100_000;
const deepArrays = (open = true) => "[".repeat(DEPTH) + (open ? "" : "]".repeat(DEPTH));
const deepObjects = () => '{"a":'.repeat(DEPTH) + "1" + "}".repeat(DEPTH);
const ping = (id: number | string) => Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }));
const call = (id: number | string | null, name = "echo") =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: { text: "hi" } } });
const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));

interface BodyCase {
  name: string;
  /** Request body (POSTed as application/json with MCP headers). */
  request: Buffer;
  response: { type: string; body: Buffer; status?: number };
  /** `invalid` records expected, by direction, as reason prefixes (order free). */
  invalid: { client_to_server?: RegExp[]; server_to_client?: RegExp[] };
  /** Other rpc records expected (kind and reason/method as given). */
  also?: Partial<LogRecord>[];
}

const tenMiBOfData = Buffer.alloc(10 * 1024 * 1024, "x");

const BODY_CASES: BodyCase[] = [
  {
    name: "invalid JSON request",
    request: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":'),
    response: { type: "application/json", body: Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}') },
    invalid: { client_to_server: [/^invalid_json: invalid JSON/] },
    also: [{ kind: "error", id: null, direction: "server_to_client" }],
  },
  {
    name: "invalid JSON response",
    request: ping(2),
    response: { type: "application/json", body: Buffer.from('{"jsonrpc":"2.0","id":2,"result":{"a":') },
    invalid: { server_to_client: [/^invalid_json: invalid JSON/] },
    also: [{ kind: "request", method: "ping", id: 2 }, { kind: "unanswered", id: 2, reason: "stream ended without a response" }],
  },
  {
    name: "invalid UTF-8 request",
    request: bytes('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"', [0xff, 0xfe, 0xc3, 0x28], '"}}'),
    response: { type: "application/json", body: Buffer.from(JSON.stringify(rpcResult(3))) },
    // Read as peers read it (bad bytes replaced), and said to be ambiguous: never a bare invalid record.
    invalid: {},
    also: [{ kind: "request", id: 3, method: "tools/call", tool: "\ufffd\ufffd\ufffd(" }, { kind: "response", id: 3 }],
  },
  {
    name: "invalid UTF-8 response",
    request: ping(4),
    response: { type: "application/json", body: bytes('{"jsonrpc":"2.0","id":4,"result":{"t":"', [0xed, 0xa0, 0x80, 0xf8], '"}}') },
    invalid: {},
    also: [{ kind: "response", id: 4, method: "ping" }],
  },
  {
    name: "100,000-deep arrays as a request",
    request: Buffer.from(deepArrays(false)),
    response: { type: "application/json", body: Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too deep"}}') },
    invalid: { client_to_server: [/^json_too_deep: JSON body nests deeper than 256 levels/] },
  },
  {
    name: "100,000-deep objects as a request",
    request: Buffer.from(deepObjects()),
    response: { type: "application/json", body: Buffer.from(JSON.stringify(rpcResult(5))) },
    invalid: { client_to_server: [/^json_too_deep/] },
  },
  {
    name: "100,000-deep params inside a valid JSON-RPC request",
    request: Buffer.from(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x","arguments":{"v":${deepArrays(false)}}}}`),
    response: { type: "application/json", body: Buffer.from(JSON.stringify(rpcResult(6))) },
    invalid: { client_to_server: [/^json_too_deep/] },
    also: [{ kind: "response", id: 6, method: null }],
  },
  {
    name: "100,000-deep unterminated JSON as a request",
    request: Buffer.from(deepArrays(true)),
    response: { type: "application/json", body: Buffer.from(JSON.stringify(rpcResult(7))) },
    invalid: { client_to_server: [/^invalid_json/] },
  },
  {
    name: "100,000-deep JSON as a response",
    request: ping(8),
    response: { type: "application/json", body: Buffer.from(deepObjects()) },
    invalid: { server_to_client: [/^json_too_deep/] },
  },
  {
    name: "100,000-deep JSON in an SSE event",
    request: ping(9),
    response: { type: "text/event-stream", body: Buffer.from(`event: message\ndata: ${deepArrays(false)}\n\n`) },
    invalid: { server_to_client: [/^JSON nests deeper than 256 levels/] },
  },
  {
    name: "JSON-RPC response sent as text/plain",
    request: ping(10),
    response: { type: "text/plain", body: Buffer.from(JSON.stringify(rpcResult(10))) },
    invalid: { server_to_client: [/^response body is not JSON or an event stream \(content-type: text\/plain\)/] },
    also: [{ kind: "request", id: 10 }, { kind: "unanswered", id: 10, reason: "stream ended without a response" }],
  },
  {
    name: "SSE sent as application/json",
    request: ping(11),
    response: { type: "application/json", body: Buffer.from(`event: message\ndata: ${JSON.stringify(rpcResult(11))}\n\n`) },
    invalid: { server_to_client: [/^invalid_json/] },
    also: [{ kind: "unanswered", id: 11 }],
  },
  {
    name: "JSON sent as text/event-stream (with a final line end)",
    request: ping(12),
    response: { type: "text/event-stream", body: Buffer.from(`${JSON.stringify(rpcResult(12))}\n`) },
    invalid: { server_to_client: [/^sse_invalid_field: invalid SSE line: Unknown field/] },
    also: [{ kind: "unanswered", id: 12, reason: "stream ended without a response" }],
  },
  {
    // eventsource-parser drops an unterminated line that cannot be a field without calling onError, so the
    // decoder sees neither an invalid field nor an incomplete event: only the unanswered request tells.
    name: "JSON sent as text/event-stream (no line end at all: not flagged)",
    request: ping(16),
    response: { type: "text/event-stream", body: Buffer.from(JSON.stringify(rpcResult(16))) },
    invalid: {},
    also: [{ kind: "unanswered", id: 16, reason: "stream ended without a response" }],
  },
  {
    name: "an SSE stream that never sends a blank line (and ends)",
    request: ping(13),
    response: { type: "text/event-stream", body: Buffer.from(`event: message\nid: e-1\ndata: ${JSON.stringify(rpcResult(13))}\n`) },
    invalid: { server_to_client: [/^sse_incomplete_event/] },
  },
  {
    name: "an SSE stream that never sends a blank line, 10 MiB (past the inspection limit)",
    request: ping(14),
    response: { type: "text/event-stream", body: Buffer.concat([Buffer.from("data: "), tenMiBOfData, Buffer.from("\ndata: more\n")]) },
    invalid: { server_to_client: [/^event_too_large: SSE event at byte 0 exceeds 8388608 bytes/, /^sse_incomplete_event/] },
  },
  {
    name: "invalid UTF-8 inside an SSE event (decoded with U+FFFD, its readability recorded)",
    request: ping(15),
    response: {
      type: "text/event-stream",
      body: bytes('event: message\ndata: {"jsonrpc":"2.0","id":15,"result":{"t":"', [0xff, 0xc3], '"}}\n\n'),
    },
    invalid: {},
    also: [{ kind: "response", id: 15, method: "ping" }],
  },
];

describe("hostile bodies end to end", () => {
  let proxy: TestProxy;
  let upstream: ScriptedUpstream;
  let agent: ProxyAgent;

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startScriptedUpstream();
    agent = proxyAgent(proxy);
    upstream.route("POST", "/ping", (req, res) => {
      const id = (req.json as { id?: number }).id ?? 0;
      const body = JSON.stringify(rpcResult(id, { ok: true }));
      res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) }).end(body);
    });
  });

  afterAll(async () => {
    await agent?.close();
    await upstream?.close();
    const records = (await proxy?.stop()) ?? [];
    expectWellFormedLog(records);
  });

  let pings = 1000;
  async function expectStillServes(): Promise<void> {
    const id = pings++;
    const res = await fetchRaw(agent, `${upstream.url}/ping`, { method: "POST", headers: mcpHeaders(), body: ping(id), keep: true });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual(rpcResult(id, { ok: true }));
  }

  it.each(BODY_CASES.map((c, i) => [c.name, c, i] as const))("%s", async (_name, c, i) => {
    const path = `/case-${i}`;
    upstream.route("POST", path, (_req, res: ServerResponse) => {
      res.writeHead(c.response.status ?? 200, { "content-type": c.response.type, "content-length": String(c.response.body.length) });
      res.end(c.response.body);
    });
    const res = await fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers: mcpHeaders(), body: c.request, keep: true });

    // Forwarded unchanged, both ways.
    const seen = upstream.requests.find((r) => r.url === path)!;
    expect(seen.body.equals(c.request)).toBe(true);
    expect(res.status).toBe(c.response.status ?? 200);
    expect(res.headers["content-type"]).toBe(c.response.type);
    expect(res.length).toBe(c.response.body.length);
    expect(res.sha256).toBe(sha256(c.response.body));

    // On the record.
    const http = await httpRecord(proxy, path);
    expect(http).toMatchObject({ status: c.response.status ?? 200, requestBytes: c.request.length, responseBytes: c.response.body.length });
    expect(http.error).toBeUndefined();
    const expectedInvalid = (c.invalid.client_to_server?.length ?? 0) + (c.invalid.server_to_client?.length ?? 0);
    const minimum = expectedInvalid + (c.also?.length ?? 0);
    let rpc: LogRecord[] = [];
    for (const deadline = Date.now() + 5_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) {
      rpc = rpcRecordsOn(await proxy.records(), path);
      if (rpc.length >= minimum && c.also?.every((a) => rpc.some((r) => matches(r, a))) !== false) break;
    }
    if (process.env.DEBUG_INPUT) console.log(c.name, JSON.stringify(rpc.map((r) => [r.direction, r.kind, r.id, r.method, r.reason])));
    for (const direction of ["client_to_server", "server_to_client"] as const) {
      const reasons = rpc.filter((r) => r.kind === "invalid" && r.direction === direction).map((r) => String(r.reason));
      const wanted = c.invalid[direction] ?? [];
      expect(reasons, `${direction} invalid reasons`).toHaveLength(wanted.length);
      for (const pattern of wanted) expect(reasons.some((r) => pattern.test(r)), `${pattern} in ${JSON.stringify(reasons)}`).toBe(true);
    }
    for (const a of c.also ?? []) expect(rpc.some((r) => matches(r, a)), `${JSON.stringify(a)} in ${JSON.stringify(rpc)}`).toBe(true);
    // A body that is not JSON at all is recorded with its size (what `tail` shows), not 0 bytes.
    for (const r of rpc.filter((x) => x.kind === "invalid" && /^(invalid_json|json_too_deep)\b/.test(String(x.reason)))) {
      expect(r.bytes, String(r.reason)).toBe(r.direction === "client_to_server" ? c.request.length : c.response.body.length);
    }
    // An invalid record never carries the raw hostile body (no 200 KB of brackets, no bad bytes).
    for (const r of rpc.filter((x) => x.kind === "invalid")) expect(JSON.stringify(r).length).toBeLessThan(4096);

    await expectStillServes();
  });

  describe("request ids", () => {
    /** Holds each request until `count` have arrived on `path`, then answers them all (in arrival order). */
    function answerTogether(path: string, count: number, answer: (body: unknown, index: number) => unknown): void {
      const held: { res: ServerResponse; body: unknown }[] = [];
      upstream.route("POST", path, (req, res) => {
        held.push({ res, body: req.json });
        if (held.length < count) return;
        held.forEach(({ res: r, body }, index) => {
          const text = JSON.stringify(answer(body, index));
          r.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }).end(text);
        });
      });
    }

    async function rpcOn(path: string, count: number): Promise<LogRecord[]> {
      await proxy.waitForRecords((r) => r.event === "rpc" && r.path === path, count, { what: `${count} rpc records on ${path}` });
      await new Promise((r) => setTimeout(r, 100)); // anything late (unanswered) lands too
      return rpcRecordsOn(await proxy.records(), path).filter((r) => r.path === path);
    }

    it("two requests with the same id in flight in one session: the first is reported id_reused", async () => {
      const path = "/ids-dup";
      answerTogether(path, 2, (_body, index) => rpcResult(7, { answer: index }));
      const headers = mcpHeaders({ "mcp-session-id": "sess-dup" });
      const first = fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers, body: call(7, "first"), keep: true });
      await proxy.waitForRecord((r) => r.event === "rpc" && r.path === path && r.kind === "request");
      const second = fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers, body: call(7, "second"), keep: true });
      const answers = await Promise.all([first, second]);
      expect(answers.map((a) => JSON.parse(a.body.toString()))).toEqual([rpcResult(7, { answer: 0 }), rpcResult(7, { answer: 1 })]);

      const rpc = await rpcOn(path, 5);
      const summary = rpc.map((r) => [r.kind, r.id, r.tool, r.reason ?? null]);
      expect(summary).toContainEqual(["request", 7, "first", null]);
      expect(summary).toContainEqual(["request", 7, "second", null]);
      expect(summary).toContainEqual(["unanswered", 7, "first", "id_reused"]);
      // Two responses with id 7: the one that comes first is taken for the pending (second) request, the
      // other has nothing left to answer. Both are on the record.
      const responses = rpc.filter((r) => r.kind === "response");
      expect(responses).toHaveLength(2);
      expect(responses.filter((r) => r.method === "tools/call")).toHaveLength(1);
      expect(responses.filter((r) => r.method === null)).toHaveLength(1);
      await expectStillServes();
    });

    it("the same id twice in one batch: the first is reported id_reused", async () => {
      const path = "/ids-batch";
      upstream.route("POST", path, (_req, res) => {
        const text = JSON.stringify([rpcResult(1), rpcResult(1)]);
        res.writeHead(200, { "content-type": "application/json", "content-length": String(text.length) }).end(text);
      });
      const body = `[${call(1, "a")},${call(1, "b")}]`;
      const res = await fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers: mcpHeaders(), body, keep: true });
      expect(res.body.toString()).toBe(JSON.stringify([rpcResult(1), rpcResult(1)]));
      const rpc = await rpcOn(path, 5);
      expect(rpc.map((r) => [r.kind, r.tool, r.reason ?? null])).toEqual(
        expect.arrayContaining([
          ["request", "a", null],
          ["request", "b", null],
          ["unanswered", "a", "id_reused"],
          ["response", "b", null],
          // The second answer has nothing left to answer, and says so.
          ["response", null, expect.stringContaining("no pending request with this id")],
        ]),
      );
      await expectStillServes();
    });

    it("missing and null ids: notification, invalid response, error with null id, request with a reason", async () => {
      const path = "/ids-missing";
      let n = 0;
      upstream.route("POST", path, (_req, res) => {
        const answers = [
          '{"jsonrpc":"2.0","result":{}}',
          '{"jsonrpc":"2.0","error":{"code":-32600,"message":"no id"}}',
          '{"jsonrpc":"2.0","id":null,"result":{}}',
        ];
        const text = answers[n++ % answers.length]!;
        res.writeHead(200, { "content-type": "application/json", "content-length": String(text.length) }).end(text);
      });
      const post = (body: string) => fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers: mcpHeaders(), body, keep: true });
      const sent = [
        '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"no-id"}}',
        '{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"null-id"}}',
        '{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"fraction"}}',
      ];
      const answers = [];
      for (const body of sent) answers.push(await post(body));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(upstream.requests.filter((r) => r.url === path).map((r) => r.body.toString())).toEqual(sent);

      const rpc = await rpcOn(path, 6);
      const summary = rpc.map((r) => [r.direction, r.kind, r.id, r.reason ?? null]);
      expect(summary).toContainEqual(["client_to_server", "notification", null, null]);
      expect(summary).toContainEqual(["server_to_client", "invalid", null, "a result response needs an id"]);
      expect(summary).toContainEqual(["client_to_server", "request", null, "id must be a string or integer"]);
      expect(summary).toContainEqual(["server_to_client", "error", null, null]);
      expect(summary).toContainEqual(["client_to_server", "request", 1.5, "id must be a string or integer"]);
      expect(summary).toContainEqual(["server_to_client", "invalid", null, "id must be a string or integer"]);
      await expectStillServes();
    });

    it("the same id in two sessions at once is two requests, each answered", async () => {
      const path = "/ids-sessions";
      answerTogether(path, 2, (body) => rpcResult((body as { id: number }).id, { ok: true }));
      const a = fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers: mcpHeaders({ "mcp-session-id": "sess-a" }), body: call(1, "in-a") });
      const b = fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers: mcpHeaders({ "mcp-session-id": "sess-b" }), body: call(1, "in-b") });
      expect((await Promise.all([a, b])).map((x) => x.status)).toEqual([200, 200]);
      const rpc = await rpcOn(path, 4);
      expect(rpc.filter((r) => r.kind === "unanswered")).toEqual([]);
      const responses = rpc.filter((r) => r.kind === "response").map((r) => [r.session, r.tool]);
      expect(responses).toEqual(expect.arrayContaining([["sess-a", "in-a"], ["sess-b", "in-b"]]));
      await expectStillServes();
    });

    it("an SSE response repeating one id many times: one answer, the rest have nothing to answer", async () => {
      const path = "/ids-sse-repeat";
      upstream.route("POST", path, (_req, res) => {
        sseHead(res);
        for (let i = 0; i < 50; i++) res.write(`event: message\ndata: ${JSON.stringify(rpcResult(21, { i }))}\n\n`);
        res.end();
      });
      const res = await fetchRaw(agent, `${upstream.url}${path}`, { method: "POST", headers: mcpHeaders(), body: call(21) });
      expect(res.status).toBe(200);
      const rpc = await rpcOn(path, 51);
      const responses = rpc.filter((r) => r.kind === "response");
      expect(responses).toHaveLength(50);
      expect(responses.filter((r) => r.method === "tools/call")).toHaveLength(1);
      await expectStillServes();
    });
  });
});

function matches(record: LogRecord, wanted: Partial<LogRecord>): boolean {
  return Object.entries(wanted).every(([k, v]) => record[k] === v);
}
