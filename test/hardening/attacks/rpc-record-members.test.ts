/**
 * An rpc record's payloads are masked when it is built, so the record guard skipped rpc records whole: its
 * other members, which quote what the peer sent, were never masked by shape. A client put a token in the
 * `tracestate` of `params._meta` (copied to the record and to the OTLP span's trace state), in the query of
 * the MCP endpoint (`path`: only credential-named parameters are redacted), in a base64-encoded `Mcp-Name`
 * header (decoded into `headerMismatch`), or as a member name sent twice (quoted in `readability.reason`
 * and in the decision's `unreadable` reason): each reached the log in clear.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

/** Built at run time: no complete credential in the source. */
const TRACE_TOKEN = ["ghp_", "k3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVi"].join("");
const PATH_TOKEN = ["ghp_", "Pa7hJx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5o"].join("");
const HEADER_KEY = ["AKIA", "J5TR8PQ2WX7M4K9B"].join("");
const DUPLICATE_TOKEN = ["ghp_", "Du9pJx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5o"].join("");
const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("peer data in an rpc record's other members", () => {
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario("mode: monitor\n");
  beforeAll(() => void ({ proxy, client, url } = scenario));

  const logged = (secret: string): boolean => readFileSync(proxy.logFile, "utf8").includes(secret.slice(4));

  it("a token in tracestate", async () => {
    await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { traceparent: TRACEPARENT, tracestate: `vendor=${TRACE_TOKEN}` } } });
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 1 && r.kind === "request", { what: "request record" });
    expect(rec.traceparent).toBe(TRACEPARENT);
    expect(logged(TRACE_TOKEN)).toBe(false);
  });

  it("a token in the endpoint's query", async () => {
    await client.post(`${url}?q=${PATH_TOKEN}`, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 2 && r.kind === "request", { what: "request record" });
    expect(logged(PATH_TOKEN)).toBe(false);
  });

  it("a URL with a key as its password in a base64-encoded Mcp-Name header", async () => {
    const name = `=?base64?${Buffer.from(`https://u:${HEADER_KEY}@db.example/x`).toString("base64")}?=`;
    const body = { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "file:///x" } };
    await client.post(url, body, { "mcp-protocol-version": "2026-07-28", "mcp-method": "resources/read", "mcp-name": name });
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 3 && r.kind === "request", { what: "request record" });
    expect(rec.headerMismatch).toBeDefined();
    expect(logged(HEADER_KEY)).toBe(false);
  });

  it("a token as a member name sent twice", async () => {
    const text = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"${DUPLICATE_TOKEN}":1,"${DUPLICATE_TOKEN}":2}}}`;
    await client.post(url, text);
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 4 && r.kind === "request", { what: "request record" });
    expect(rec.readability).toBeDefined();
    expect(logged(DUPLICATE_TOKEN)).toBe(false);
  });
});
