/**
 * The record → span conversion on hand-made records: pairing, hostile ids and names, bounds.
 */
import { describe, expect, it } from "vitest";
import { McpSpanBuilder, decisionCounts, splitServer, type McpSpan } from "../../src/otel/mcp-spans.js";
import { rpcRecord } from "../../src/records/rpc-record.js";

const base = { event: "rpc", flow: "f1", transport: "streamable-http", server: "[::1]:8443", path: "/mcp", session: "s1", protocolVersion: "2025-11-25" };
const req = (id: unknown, extra: Record<string, unknown> = {}) => ({ ...base, direction: "client_to_server", kind: "request", id, method: "tools/call", tool: "t", ...extra });
const res = (id: unknown, extra: Record<string, unknown> = {}) => ({ ...base, direction: "server_to_client", kind: "response", id, method: "tools/call", tool: "t", ...extra });

function build(records: Record<string, unknown>[], maxOpen?: number): { spans: McpSpan[]; builder: McpSpanBuilder } {
  const spans: McpSpan[] = [];
  const builder = new McpSpanBuilder({ payloads: false, ...(maxOpen ? { maxOpen } : {}) }, (s) => spans.push(s));
  for (const r of records) builder.record(r);
  return { spans, builder };
}

describe("McpSpanBuilder", () => {
  it("pairs a request with its response by session and id, and tells 1 from \"1\"", () => {
    const { spans, builder } = build([req(1, { time: "2026-01-01T00:00:00.000Z" }), req("1"), res("1"), res(1, { time: "2026-01-01T00:00:00.250Z", isError: true })]);
    expect(spans.map((s) => [s.name, s.attributes["jsonrpc.request.id"], s.error?.type ?? null])).toEqual([
      ["tools/call t", "1", null],
      ["tools/call t", "1", "tool_error"],
    ]);
    expect(spans[1]!.endMs - spans[1]!.startMs).toBe(250);
    expect(spans[1]!.attributes).toMatchObject({ "server.address": "::1", "server.port": 8443 });
    expect(builder.openRequests).toBe(0);
  });

  it("ends initialize when its answer comes, though its request had no session yet and the answer has one", () => {
    const init = { time: "2026-01-01T00:00:00.000Z", session: null, method: "initialize", tool: null };
    const { spans, builder } = build([req(0, init), res(0, { ...init, session: "s-new", time: "2026-01-01T00:00:00.040Z" })]);
    expect(spans).toHaveLength(1);
    expect(spans[0]).toMatchObject({ name: "initialize", error: null, attributes: { "mcp.session.id": "s-new" } });
    expect(spans[0]!.endMs - spans[0]!.startMs).toBe(40);
    expect(builder.openRequests).toBe(0);
    // Another exchange's answer with that id is not this request's.
    const other = build([req(0, init), res(0, { ...init, session: "s-new", flow: "f2" })]);
    expect(other.spans).toEqual([]);
  });

  it("takes ids and names such as __proto__ as data", () => {
    const { spans } = build([req("__proto__", { tool: "__proto__" }), res("__proto__")]);
    expect(spans[0]!.name).toBe("tools/call __proto__");
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  it("passes the record's traceparent on as the span's parent", () => {
    const { spans } = build([req(2, { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }), res(2)]);
    expect(spans[0]!.parent).toEqual({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" });
  });

  it("holds a bounded number of open requests: the oldest is ended as evicted", () => {
    const records = Array.from({ length: 5 }, (_, i) => req(i));
    const { spans, builder } = build(records, 3);
    expect(builder.openRequests).toBe(3);
    expect(spans.map((s) => [s.attributes["jsonrpc.request.id"], s.error?.message])).toEqual([
      ["0", "evicted"],
      ["1", "evicted"],
    ]);
  });

  it("ends a request denied in enforce mode at once, and counts decisions per rule", () => {
    const decision = { action: "deny", enforced: true, rules: [{ name: "no-env", action: "deny" }] };
    const { spans } = build([req(3, { decision })]);
    expect(spans[0]).toMatchObject({ error: { type: "policy_denied" }, attributes: { "mcp_wiretap.decision.action": "deny", "mcp_wiretap.decision.rules": ["no-env"], "mcp_wiretap.decision.enforced": true } });
    expect(decisionCounts(req(3, { decision }))).toEqual([{ action: "deny", rule: "no-env" }]);
    expect(decisionCounts(req(4, { decision: { action: "allow", enforced: false, rules: [] } }))).toEqual([{ action: "allow", rule: "none" }]);
  });

  it("names the client as the record does (IPv6 bracketed), and a stdio call's transport as a pipe", () => {
    const { spans } = build([req(5, { client: "[::1]:53001" }), res(5), req(6, { client: "127.0.0.1:40000" }), res(6), req(7, { transport: "stdio", server: "stdio:npx", session: null }), res(7, { transport: "stdio", server: "stdio:npx", session: null })]);
    expect(spans[0]!.attributes).toMatchObject({ "client.address": "::1", "client.port": 53001, "network.transport": "tcp" });
    expect(spans[1]!.attributes).toMatchObject({ "client.address": "127.0.0.1", "client.port": 40000 });
    expect(spans[2]!.attributes).toMatchObject({ "network.transport": "pipe" });
    expect(spans[2]!.attributes["client.address"]).toBeUndefined();
    expect(spans[2]!.attributes["network.protocol.name"]).toBeUndefined();
  });

  it("reads servers as the records write them", () => {
    expect(splitServer("example.com:443")).toEqual({ address: "example.com", port: 443 });
    expect(splitServer("[::1]:1")).toEqual({ address: "::1", port: 1 });
    expect(splitServer("nonsense")).toBeNull();
  });
});

describe("trace context in rpc records", () => {
  const event = (meta: unknown) =>
    rpcRecord(
      {
        flow: "f", transport: "streamable-http", server: "s:1", path: "/mcp", session: null, protocolVersion: null, direction: "client_to_server",
        kind: "request", id: 1, method: "tools/call", tool: "t", bytes: 10,
        raw: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t", _meta: meta } },
      },
      { payloads: "none", maxPayloadBytes: 1024 },
    );

  it("carries the client's address when the message came in an exchange", () => {
    const withClient = (client: string | undefined) =>
      rpcRecord(
        { flow: "f", transport: "streamable-http", server: "s:1", ...(client ? { client } : {}), path: "/mcp", session: null, protocolVersion: null, direction: "client_to_server", kind: "request", id: 1, method: "ping", bytes: 10 },
        { payloads: "none", maxPayloadBytes: 1024 },
      );
    expect(withClient("[::1]:53001").client).toBe("[::1]:53001");
    expect("client" in withClient(undefined)).toBe(false);
  });

  it("keeps a well-formed traceparent and tracestate in every payload mode", () => {
    const r = event({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "a=1,b=2" });
    expect(r).toMatchObject({ traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "a=1,b=2" });
  });

  it("drops malformed or oversized values rather than carry them", () => {
    expect(event({ traceparent: "00-xyz-b7ad6b7169203331-01" }).traceparent).toBeUndefined();
    expect(event({ traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01\n` }).traceparent).toBeUndefined();
    const r = event({ traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01`, tracestate: "x".repeat(513) });
    expect(r.traceparent).toBeDefined();
    expect(r.tracestate).toBeUndefined();
    expect(event("not an object").traceparent).toBeUndefined();
  });
});
