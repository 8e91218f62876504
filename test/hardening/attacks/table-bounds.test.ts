/**
 * One hostile peer against the proxy's tables (issue: "one hostile peer, a bounded cost"). Each table was
 * bounded by count alone, so a peer that makes its entries large made the proxy hold gigabytes:
 * `initialize` params kept whole while their answer never came, a legacy stream's endpoints kept after it
 * ended, every tool schema ever listed, long `Mcp-Session-Id` values. Each attack here is sized to run in
 * seconds; what the proxy still holds afterwards is measured after full collections.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TableEvictedRecord } from "../../../src/bounds/evictions.js";
import type { RpcEvent } from "../../../src/mcp/rpc-event.js";
import type { SessionRecord } from "../../../src/mcp/sessions.js";
import { McpTracker, TABLE_BYTES, type TrackedContext } from "../../../src/mcp/tracker.js";
import { type TestProxy, startTestProxy } from "../../helpers/proxy-harness.js";
import { MiB, retainedBy } from "../../helpers/retained-memory.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { policyFrom, toolCall, toolsListResponse } from "../../policy/policy-fixtures.js";
import { rawClient, type RawClient } from "../../mcp/raw-client.js";
import { expectRecordsMatchSchemas } from "../../records/expect-records.js";

/** The limits the proxy runs with (src/pipeline/record-pipeline.ts). */
const PRODUCTION = { maxPending: 10_000, maxSessions: 10_000 };
const SERVER = "victim.test:443";

const ctx = (session: string | null, direction: TrackedContext["direction"], flow: string): TrackedContext => ({
  flow,
  transport: "streamable-http",
  server: SERVER,
  path: "/mcp",
  session,
  protocolVersion: null,
  direction,
  scope: session ?? `flow:${flow}`,
});

/** A tracker whose outputs keep counts only (records would hold what the test measures). */
function countingTracker() {
  const seen = { unanswered: 0, sessionEnds: 0, evicted: [] as TableEvictedRecord[], sessionStarts: [] as SessionRecord[] };
  const tracker = new McpTracker(
    {
      rpc: (e: RpcEvent) => void (e.kind === "unanswered" && seen.unanswered++),
      session: (r) => (r.phase === "end" ? seen.sessionEnds++ : seen.sessionStarts.push(r)),
      evicted: (r) => seen.evicted.push(r),
    },
    PRODUCTION,
  );
  return { tracker, seen };
}

/** A fresh string of `bytes` characters (not a slice or a rope of a shared one: it costs what it says). */
const fresh = (bytes: number, seed: number): string => Buffer.alloc(bytes, `${seed % 10}abcdefgh`).toString("latin1");

describe("one hostile peer against the tracker's tables", () => {
  it("1,000 initialize requests with 1 MiB params, never answered: only clientInfo and capabilities wait, size-capped", async () => {
    const { tracker, seen } = countingTracker();
    const junk = fresh(MiB, 0);
    const retained = await retainedBy(() => {
      for (let i = 0; i < 1_000; i++) {
        const params = { protocolVersion: "2025-11-25", clientInfo: { name: `c${i}`, version: "1" }, capabilities: { experimental: { blob: fresh(128 * 1024, i) } }, junk };
        tracker.message(ctx(null, "client_to_server", `flow-${i}`), { jsonrpc: "2.0", id: 1, method: "initialize", params }, MiB);
      }
    });
    // Held whole, the capabilities alone were 128 MB (and the params the client chose, a GB).
    expect(retained).toBeLessThan(24 * MiB);
    const usage = tracker.correlator.usage;
    expect(usage.pending).toBe(1_000);
    expect(usage.pendingBytes).toBeLessThanOrEqual(TABLE_BYTES);

    // The one answered still gets its session record, with a note where its capabilities were.
    tracker.message({ ...ctx(null, "server_to_client", "flow-7"), assignedSession: "s-7" }, { jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "s", version: "1" } } }, 100);
    expect(seen.sessionStarts).toHaveLength(1);
    expect(seen.sessionStarts[0]).toMatchObject({ session: "s-7", clientInfo: { name: "c7", version: "1" }, capabilities: { client: { omitted: true, bytes: expect.any(Number) as unknown } } });

    // Given up (their streams ended): the given-up table keeps what ties a late answer, bounded too.
    tracker.giveUp(() => true, "stream ended without a response");
    expect(seen.unanswered).toBe(999);
    expect(tracker.correlator.usage).toMatchObject({ pending: 0, pendingBytes: 0, givenUp: 999 });
    expect(tracker.correlator.usage.givenUpBytes).toBeLessThan(999 * 1024);
  });

  it("the pending and given-up tables are bounded in bytes: long request ids evict the oldest, with records", () => {
    const { tracker, seen } = countingTracker();
    const id = (i: number) => `${i}:${"i".repeat(64 * 1024)}`;
    for (let i = 0; i < 1_000; i++) tracker.message(ctx("s", "client_to_server", "f"), { jsonrpc: "2.0", id: id(i), method: "ping" }, 70_000);
    expect(tracker.correlator.usage.pendingBytes).toBeLessThanOrEqual(TABLE_BYTES);
    expect(seen.unanswered).toBeGreaterThan(0); // each evicted request: an unanswered record, reason evicted
    tracker.giveUp(() => true, "stream ended without a response");
    for (let i = 0; i < 1_000; i++) tracker.message(ctx("s", "client_to_server", "f"), { jsonrpc: "2.0", id: `x${id(i)}`, method: "ping" }, 70_000);
    tracker.giveUp(() => true, "stream ended without a response");
    expect(tracker.correlator.usage.givenUpBytes).toBeLessThanOrEqual(TABLE_BYTES);
    tracker.close();
    // One peer sent them all: its share of the table (an eighth) is what filled (table-shares.test.ts).
    expect(seen.evicted.find((r) => r.table === "given_up")).toMatchObject({ event: "table_evicted", reason: "per_client", maxBytes: TABLE_BYTES });
  });

  it("5,000 requests with a new 15 KB Mcp-Session-Id each: the session table stays within its bytes", async () => {
    const { tracker, seen } = countingTracker();
    const retained = await retainedBy(() => {
      for (let i = 0; i < 5_000; i++) tracker.message(ctx(fresh(15_000, i) + i, "client_to_server", `f${i}`), { jsonrpc: "2.0", method: "notifications/initialized" }, 100);
    });
    // Bounded by count alone (10,000), all 5,000 sessions of 15 KB were held: 75 MB.
    expect(retained).toBeLessThan(24 * MiB);
    expect(tracker.sessions.usage.bytes).toBeLessThanOrEqual(TABLE_BYTES);
    // Every session let go ends with reason evicted, in its session record.
    expect(seen.sessionEnds).toBe(5_000 - tracker.sessions.usage.entries);
  });

  it("a legacy stream announcing 2,000 endpoints of 8 KiB: bounded while it runs, nothing left once it ends", async () => {
    const { tracker, seen } = countingTracker();
    const base = new URL(`http://${SERVER}/sse`);
    const retained = await retainedBy(() => {
      for (let i = 0; i < 2_000; i++) tracker.legacy.register(`/messages?sessionId=${i}&pad=${fresh(8 * 1024, i)}`, base, "stream-1", SERVER);
      expect(tracker.legacy.usage.bytes).toBeLessThanOrEqual(TABLE_BYTES / 4);
      tracker.endLegacyStream("stream-1", "stream closed");
    });
    expect(retained).toBeLessThan(8 * MiB);
    expect(tracker.legacy.all()).toEqual([]);
    expect(tracker.legacy.usage).toEqual({ entries: 0, bytes: 0 });
    tracker.close();
    expect(seen.evicted.filter((r) => r.table === "legacy_endpoints").reduce((n, r) => n + r.evicted, 0)).toBeGreaterThan(1_900);
  });

  it("open rounds of multi-round calls are bounded in bytes (a long tool name in each)", () => {
    const { tracker, seen } = countingTracker();
    for (let i = 0; i < 2_000; i++) {
      const tool = `${i}-${"t".repeat(16 * 1024)}`;
      tracker.message(ctx("s", "client_to_server", `f${i}`), { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: tool, arguments: {} } }, 100);
      tracker.message(ctx("s", "server_to_client", `f${i}`), { jsonrpc: "2.0", id: i, result: { resultType: "input_required", requestState: "x" } }, 100);
    }
    expect(tracker.rounds.usage.bytes).toBeLessThanOrEqual(TABLE_BYTES / 4);
    tracker.close();
    // One server opened them all: its share (an eighth) is what filled.
    expect(seen.evicted.find((r) => r.table === "multi_round")).toMatchObject({ reason: "per_server", peer: `server ${SERVER}` });
  });
});

describe("a legacy stream's endpoints, through the proxy", () => {
  let upstream: ScriptedUpstream;
  let proxy: TestProxy;
  let client: RawClient;
  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    proxy = await startTestProxy();
    client = rawClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await upstream?.close();
  });

  it("a stream announcing 1,000 endpoints of 12 KiB, then ending: its endpoints are gone, and a POST to one is not tied to it", async () => {
    const pad = "p".repeat(12 * 1024);
    upstream.route("GET", "/sse", (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      // The last few short: a POST to one must fit in a request head.
      for (let i = 0; i < 1_000; i++) res.write(`event: endpoint\ndata: /messages?sessionId=${i}${i < 995 ? `&pad=${pad}` : ""}\n\n`);
      res.end();
    });
    upstream.route("POST", "*", (_req, res) => void res.writeHead(202).end());
    const retained = await retainedBy(async () => {
      const stream = await client.get(`${upstream.url}/sse`);
      await stream.text();
      await proxy.waitForRecord((r) => r.event === "http" && r.path === "/sse", { what: "the stream's http record" });
    });
    // Kept by count alone, the 1,000 endpoints (twice each: key and path) were 24 MB after the stream ended.
    expect(retained).toBeLessThan(12 * MiB);
    await client.post(`${upstream.url}/messages?sessionId=998`, { jsonrpc: "2.0", method: "notifications/initialized" });
    const posted = await proxy.waitForRecord((r) => r.event === "rpc" && r.method === "notifications/initialized", { what: "the POST's rpc record" });
    expect(posted.transport).not.toBe("http+sse");
    const all = await proxy.records();
    expect(all.some((r) => r.event === "table_evicted" && r.table === "legacy_endpoints" && r.reason === "per_stream")).toBe(true);
    expectRecordsMatchSchemas(all, "table_evicted");
  });
});

describe("one hostile server against the tool catalog", () => {
  const schema = (i: number, j: number) => ({
    type: "object",
    properties: Object.fromEntries(Array.from({ length: 24 }, (_, k) => [`field_${i}_${j}_${k}`, { type: "string", description: `the ${k}th field of tool ${j} in list ${i}, described at some length` }])),
  });

  it("120 tools/list answers of 100 new tools each: the catalog keeps a bounded share, least recently used out, with a record", async () => {
    const evicted: unknown[] = [];
    const policy = policyFrom("detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: flag }\n", { warn: (w) => evicted.push(w) });
    const retained = await retainedBy(() => {
      for (let i = 0; i < 120; i++) {
        const tools = Array.from({ length: 100 }, (_, j) => ({ name: `tool_${i}_${j}`, description: "d", inputSchema: schema(i, j) }));
        policy.judge(toolsListResponse(tools, { server: SERVER }));
      }
    });
    // Every schema ever listed: 12,000 of ~2 KB, over 60 MB of objects.
    expect(retained).toBeLessThan(24 * MiB);
    expect(evicted).toContainEqual(expect.objectContaining({ event: "table_evicted", table: "tool_catalog" }));
    // The latest tools are checked; an evicted one is not called unknown (its schema is just not at hand).
    const latest = policy.judge(toolCall("tool_119_0", { field_119_0_0: 1 }, { server: SERVER }));
    expect(JSON.stringify(latest.rules)).toContain("schema_violation");
    const early = policy.judge(toolCall("tool_0_0", {}, { server: SERVER }));
    expect(JSON.stringify(early.rules)).not.toContain("unknown_tool");
    expect(JSON.stringify(early.rules)).toContain("schema_unchecked");
  });
});
