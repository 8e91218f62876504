/**
 * `payloads: none | truncated | full`: how much of params / result / error reaches an rpc record.
 * Secrets are redacted first in every mode; sizes and hashes describe the redacted JSON.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PayloadMode } from "../../src/log/payload.js";
import { type LogRecord, type TestProxy, startTestProxy } from "../helpers/proxy-harness.js";
import { type ScriptedUpstream, json, rpcResult, startScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { isRpc, rawClient } from "./raw-client.js";

const sha = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

const ARGS = { text: `${"é".repeat(150)} ✓ 日本語`, password: "hunter2", nested: { api_key: "sk-live-123", keep: "visible" } };
const PARAMS = { name: "store", arguments: ARGS };
const RESULT = { content: [{ type: "text", text: "r".repeat(400) }], access_token: "tok-secret" };
const ERROR = { code: -32602, message: "bad input", data: { client_secret: "cs-1", detail: "d".repeat(300) } };
const NOT_RPC = { hello: "world", filler: "f".repeat(300), secret: "s3" };

/** The same values with the secrets as the log shows them, member order kept. */
const REDACTED_PARAMS = { name: "store", arguments: { ...ARGS, password: "[redacted]", nested: { api_key: "[redacted]", keep: "visible" } } };
const REDACTED_RESULT = { ...RESULT, access_token: "[redacted]" };
const REDACTED_ERROR = { ...ERROR, data: { client_secret: "[redacted]", detail: ERROR.data.detail } };
const REDACTED_NOT_RPC = { ...NOT_RPC, secret: "[redacted]" };

const MAX = 64;

describe("payload modes", () => {
  let upstream: ScriptedUpstream;
  const proxies = new Map<PayloadMode, TestProxy>();
  const logs = new Map<PayloadMode, LogRecord[]>();

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    upstream.route("POST", "/pl/mcp", (req, res) => {
      const msg = req.json as { id?: number; method?: string };
      if (msg.method === "tools/call") return json(res, rpcResult(msg.id!, RESULT));
      if (msg.method === "ping") return json(res, rpcResult(msg.id!, {}));
      if (msg.method === "bad") return json(res, { jsonrpc: "2.0", id: msg.id, error: ERROR });
      json(res, { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } }, {}, 400);
    });
    // One after the other: the harness captures stderr while a proxy starts.
    for (const mode of ["none", "truncated", "full"] as const) {
      const proxy = await startTestProxy({ payloads: mode, maxPayloadBytes: MAX });
      proxies.set(mode, proxy);
      const client = rawClient(proxy);
      const headers = { "mcp-session-id": `pl-${mode}` };
      const url = `${upstream.url}/pl/mcp`;
      try {
        await (await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: PARAMS }, headers)).json();
        await (await client.post(url, { jsonrpc: "2.0", id: 2, method: "ping" }, headers)).json();
        await (await client.post(url, { jsonrpc: "2.0", id: 3, method: "bad", params: {} }, headers)).json();
        await (await client.post(url, NOT_RPC, headers)).json();
        // 3 requests, 3 answers, 1 invalid, 1 error without id.
        logs.set(mode, await proxy.waitForRecords(isRpc, 8, { what: `${mode} rpc records` }));
      } finally {
        await client.close();
      }
    }
  });
  afterAll(async () => {
    for (const proxy of proxies.values()) await proxy.stop();
    await upstream?.close();
  });

  const find = (mode: PayloadMode, kind: string, id: number | null) => {
    const found = logs.get(mode)!.filter((r) => r.kind === kind && (id === null || r.id === id));
    expect(found, `${mode} ${kind} ${id}`).toHaveLength(1);
    return found[0]!;
  };
  const measure = (value: unknown) => {
    const text = JSON.stringify(value);
    return { bytes: Buffer.byteLength(text), sha256: sha(text) };
  };

  it("none: no payload, only its size and the hash of its redacted JSON", () => {
    expect(find("none", "request", 1).params).toEqual({ omitted: true, ...measure(REDACTED_PARAMS) });
    expect(find("none", "response", 1).result).toEqual({ omitted: true, ...measure(REDACTED_RESULT) });
    expect(find("none", "response", 2).result).toEqual({ omitted: true, ...measure({}) });
    expect(find("none", "error", 3).error).toEqual({ omitted: true, ...measure(REDACTED_ERROR) });
    expect(find("none", "invalid", null).message).toEqual({ omitted: true, ...measure(REDACTED_NOT_RPC) });
    const ping = find("none", "request", 2);
    expect("params" in ping).toBe(false); // nothing sent, nothing measured
    // argsHash is not a payload: it stays in every mode.
    expect(find("none", "request", 1).argsHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(JSON.stringify(logs.get("none"))).not.toMatch(/hunter2|sk-live-123|tok-secret|cs-1|"s3"|éé/);
  });

  it("truncated: large payloads become {truncated, bytes, sha256, preview}; small ones stay whole", () => {
    const check = (value: unknown, redacted: unknown) => {
      const text = JSON.stringify(redacted);
      expect(value).toEqual({ truncated: true, bytes: Buffer.byteLength(text), sha256: sha(text), preview: expect.any(String) });
      const preview = (value as { preview: string }).preview;
      expect(text.startsWith(preview)).toBe(true);
      expect(Buffer.byteLength(preview)).toBeLessThanOrEqual(MAX);
      expect(Buffer.byteLength(preview)).toBeGreaterThan(MAX - 4); // cut on a character boundary, not short
    };
    check(find("truncated", "request", 1).params, REDACTED_PARAMS);
    check(find("truncated", "response", 1).result, REDACTED_RESULT);
    check(find("truncated", "error", 3).error, REDACTED_ERROR);
    check(find("truncated", "invalid", null).message, REDACTED_NOT_RPC);
    expect(find("truncated", "response", 2).result).toEqual({});
    expect(find("truncated", "request", 3).params).toEqual({});
    expect(JSON.stringify(logs.get("truncated"))).not.toMatch(/hunter2|sk-live-123|tok-secret|cs-1|"s3"/);
  });

  it("full: everything, redacted", () => {
    expect(find("full", "request", 1).params).toEqual(REDACTED_PARAMS);
    expect(find("full", "response", 1).result).toEqual(REDACTED_RESULT);
    expect(find("full", "response", 2).result).toEqual({});
    expect(find("full", "error", 3).error).toEqual(REDACTED_ERROR);
    expect(find("full", "invalid", null).message).toEqual(REDACTED_NOT_RPC);
    expect(JSON.stringify(logs.get("full"))).not.toMatch(/hunter2|sk-live-123|tok-secret|cs-1|"s3"/);
  });

  it("the same message hashes the same in every mode", () => {
    const full = JSON.stringify(find("full", "request", 1).params);
    expect((find("none", "request", 1).params as { sha256: string }).sha256).toBe(sha(full));
    expect((find("truncated", "request", 1).params as { sha256: string }).sha256).toBe(sha(full));
    expect(new Set((["none", "truncated", "full"] as const).map((m) => find(m, "request", 1).argsHash)).size).toBe(1);
  });
});
