/**
 * Multi-round requests (2026-07-28): an `input_required` result and the client's retries are one logical
 * call in the log (`call`, `round`), and a retry whose `requestState` is not the one the server issued is
 * flagged on its record. A scripted stateless server, a raw client through the proxy.
 */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statsCommand } from "../../src/cli/stats-command.js";
import { MultiRoundCalls } from "../../src/mcp/multi-round.js";
import { type LogRecord, type TestProxy, startTestProxy } from "../helpers/proxy-harness.js";
import { type ScriptedUpstream, json, rpcResult, startScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { type RawClient, isRpc, rawClient } from "./raw-client.js";

const V = "2026-07-28";
const meta = { "io.modelcontextprotocol/protocolVersion": V, clientInfo: { name: "raw-mrtr", version: "0" }, clientCapabilities: {} };
const PATH = "/mrtr/mcp";

let upstream: ScriptedUpstream;
let proxy: TestProxy;
let client: RawClient;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  proxy = await startTestProxy({ payloads: "full" });
  client = rawClient(proxy);
  // Asks twice (state-1, then state-2) before answering; the state it issues is what it expects back.
  upstream.route("POST", PATH, (req, res) => {
    const msg = req.json as { id: number | string; params: { requestState?: string } };
    const state = msg.params.requestState;
    if (state === undefined) return json(res, rpcResult(msg.id, { resultType: "input_required", inputRequests: { ok: { method: "elicitation/create", params: {} } }, requestState: "state-1" }));
    if (state === "state-1") return json(res, rpcResult(msg.id, { resultType: "input_required", inputRequests: { sure: { method: "elicitation/create", params: {} } }, requestState: "state-2" }));
    json(res, rpcResult(msg.id, { resultType: "complete", content: [{ type: "text", text: `done with ${state}` }] }));
  });
});
afterAll(async () => {
  await client?.close();
  await proxy?.stop();
  await upstream?.close();
});

const call = async (id: number, extra: Record<string, unknown> = {}) => {
  const body = { jsonrpc: "2.0", id, method: "tools/call", params: { name: "delete-all", arguments: {}, _meta: meta, ...extra } };
  const res = await client.post(`${upstream.url}${PATH}`, body, { "mcp-protocol-version": V, "mcp-method": "tools/call", "mcp-name": "delete-all" });
  return res.json();
};
const recordsOf = (id: number) => proxy.waitForRecords((r) => isRpc(r) && r.path === PATH && r.id === id, 2, { what: `records of id ${id}` });

describe("multi-round requests", () => {
  it("ties the rounds of one call together: the same call on every record after the first request, rounds 1, 2, 3", async () => {
    await call(1);
    await call(2, { inputResponses: { ok: { action: "accept" } }, requestState: "state-1" });
    await call(3, { inputResponses: { sure: { action: "accept" } }, requestState: "state-2" });
    const [req1, res1] = await recordsOf(1);
    const [req2, res2] = await recordsOf(2);
    const [req3, res3] = await recordsOf(3);
    const id = `${req1!.flow as string}#n:1`;
    // The first request is written before anyone knows the call will take rounds.
    expect(req1!.call).toBeUndefined();
    expect(res1).toMatchObject({ kind: "response", resultType: "input_required", call: id, round: 1 });
    expect(req2).toMatchObject({ kind: "request", call: id, round: 2, level: "info" });
    expect(res2).toMatchObject({ kind: "response", resultType: "input_required", call: id, round: 2 });
    expect(req3).toMatchObject({ kind: "request", call: id, round: 3, level: "info" });
    expect(res3).toMatchObject({ kind: "response", resultType: "complete", call: id, round: 3 });
    for (const r of [req2, req3] as LogRecord[]) expect(r.roundProblem).toBeUndefined();

    // `stats` over this log: three rounds, one call, its latency the sum of the rounds'.
    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (c: Buffer) => (out += c.toString()));
    await statsCommand([proxy.logFile], { json: true, tool: ["delete-all"] }, { stdout, stderr: new PassThrough(), stdin: new PassThrough() });
    const group = (JSON.parse(out) as { groups: { calls: number; multiRound: number; latencyMs: { p50: number } }[] }).groups[0]!;
    expect(group).toMatchObject({ calls: 1, multiRound: 1, latencyMs: { p50: [res1, res2, res3].reduce((s, r) => s + (r!.latencyMs as number), 0) } });
  });

  it("flags a retry whose requestState differs from the one the server issued, and one that drops it", async () => {
    await call(10);
    await call(11, { inputResponses: { ok: { action: "accept" } }, requestState: "state-1-forged" });
    const [, res10] = await recordsOf(10);
    const [req11] = await recordsOf(11);
    expect(req11).toMatchObject({ kind: "request", call: res10!.call, round: 2, level: "warn", roundProblem: "requestState differs from the one the server issued (tampered?)" });

    await call(20);
    await call(21, { inputResponses: { ok: { action: "accept" } } });
    const [req21] = await recordsOf(21);
    expect(req21).toMatchObject({ level: "warn", roundProblem: "retry without the requestState the server issued" });
  });

  it("flags a retry of a round the proxy never saw issued", async () => {
    await call(30, { inputResponses: { ok: { action: "accept" } }, requestState: "made-up" });
    const [req30] = await recordsOf(30);
    // Tools named alike on another path would share the table: this retry matches nothing open.
    expect(req30!.level).toBe("warn");
    expect(typeof req30!.roundProblem).toBe("string");
  });
});

describe("the table of open rounds", () => {
  it("is bounded: past its size the oldest round is forgotten, and a retry of it is reported as unknown", () => {
    const rounds = new MultiRoundCalls({ maxEntries: 2, maxBytes: 1 << 20 }, undefined, { maxEntries: 2, maxBytes: 1 << 20 });
    const at = (id: number) => ({ server: "s:1", session: null, method: "tools/call", tool: `t${id}` });
    for (const id of [1, 2, 3]) rounds.answered({ ...at(id), flow: `f${id}`, id }, { resultType: "input_required", requestState: `state-${id}` });
    expect(rounds.retry(at(1), { requestState: "state-1", inputResponses: {} })).toEqual({ roundProblem: expect.stringContaining("no input_required result") as unknown });
    expect(rounds.retry(at(2), { requestState: "state-2", inputResponses: {} })).toEqual({ call: "f2#n:2", round: 2 });
    expect(rounds.retry(at(3), { requestState: "state-2", inputResponses: {} })).toMatchObject({ call: "f3#n:3", round: 2, roundProblem: expect.stringContaining("differs") as unknown });
  });

  it("stays bounded when a flow reuses a request id for new calls (stdio: one flow per launch)", () => {
    const rounds = new MultiRoundCalls({ maxEntries: 4, maxBytes: 1 << 20 }, undefined, { maxEntries: 4, maxBytes: 1 << 20 });
    const at = { server: "stdio:x", session: "s", method: "tools/call", tool: "t" };
    for (let i = 0; i < 100; i++) rounds.answered({ ...at, flow: "s", id: 1 }, { resultType: "input_required", requestState: `state-${i}` });
    // Only the latest round of call s#1 is open: the earlier states are forgotten, not kept for good.
    expect(rounds.retry(at, { requestState: "state-0", inputResponses: {} })).toMatchObject({ round: 2, roundProblem: expect.stringContaining("differs") as unknown });
    expect(rounds.retry(at, { requestState: "state-99", inputResponses: {} })).toEqual({ call: "s#n:1", round: 2 });
  });
});
