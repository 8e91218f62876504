/**
 * `GET /api/tokens`: the web UI's token estimates, counted on the server from the records it holds, as
 * `stats --tokens` counts them (tokenCosts), with a tool's calls kept apart per server address (two servers
 * may both have a `search`), up to where the page stood, and refused past the bytes it reads.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { buildCalls } from "../../../src/analysis/calls.js";
import type { LogRecord } from "../../../src/saved-logs/filters.js";
import { tokenCosts } from "../../../src/tokens/token-costs.js";
import { loadTokenCounter } from "../../../src/tokens/token-counter.js";
import type { UiTokenReport } from "../../../src/tokens/tokens-in-turns.js";
import { RecordHistory } from "../../../src/ui/server/record-history.js";
import { tokenHandler } from "../../../src/ui/server/token-endpoint.js";
import { TokenWorker } from "../../../src/tokens/token-worker.js";
import { serveHandler, type ServedHandler } from "./serve-handler.js";

let server: ServedHandler | undefined;
const worker = new TokenWorker();

afterEach(async () => {
  await server?.close();
  server = undefined;
});

afterAll(() => worker.close());

async function serve(lines: string[], maxSourceBytes?: number): Promise<(path: string) => Promise<{ status: number; body: string; upto: string }>> {
  const history = new RecordHistory();
  for (const l of lines) history.append(l);
  server = await serveHandler(tokenHandler(history, worker.count, maxSourceBytes));
  const served = server;
  return async (path) => {
    const r = await served.get(path);
    return { ...r, upto: String(r.headers["x-wiretap-upto"]) };
  };
}

const allow = { action: "allow", enforced: false, rules: [] };
const search = { name: "search", description: "Searches the index.", inputSchema: { type: "object", properties: { q: { type: "string" } } } };
const rpc = (server: string, fields: Record<string, unknown>): Record<string, unknown> => ({ level: "info", time: "2026-11-28T04:00:00.000Z", event: "rpc", server, session: server, transport: "streamable-http", decision: allow, ...fields });
function serverLog(server: string, words: number): Record<string, unknown>[] {
  return [
    rpc(server, { flow: `${server}-l`, id: 1, kind: "response", direction: "server_to_client", method: "tools/list", result: { tools: [search] } }),
    ...[1, 2, 3].flatMap((n) => [
      rpc(server, { flow: `${server}-${n}`, id: 10 + n, kind: "request", direction: "client_to_server", method: "tools/call", tool: "search", params: { name: "search", arguments: { q: "x" } } }),
      rpc(server, { flow: `${server}-${n}`, id: 10 + n, kind: "response", direction: "server_to_client", method: "tools/call", tool: "search", latencyMs: 2, result: { content: [{ type: "text", text: "hit ".repeat(words * n) }] } }),
    ]),
  ];
}
const small = serverLog("127.0.0.1:9001", 2);
const large = serverLog("127.0.0.1:9002", 50);
const lines = [...small, ...large].map((r) => JSON.stringify(r));

describe("UI token estimates", () => {
  it("are what stats --tokens counts, each server's calls apart, up to where the page stood", async () => {
    const get = await serve(lines);
    const count = await loadTokenCounter();
    const costs = (records: Record<string, unknown>[]) => tokenCosts(records as LogRecord[], buildCalls(records as LogRecord[]), count);
    const answer = await get("/api/tokens");
    expect(answer.status).toBe(200);
    expect(answer.upto).toBe(String(lines.length));
    const report = JSON.parse(answer.body) as UiTokenReport;
    expect(report).toMatchObject({ encoding: "o200k_base", estimate: true });
    expect(report.lists).toEqual(costs([...small, ...large]).lists);
    expect(report.byAddress).toEqual([
      { address: "127.0.0.1:9001", tools: costs(small).tools },
      { address: "127.0.0.1:9002", tools: costs(large).tools },
    ]);
    expect(report.byAddress[1]!.tools[0]!.results.mean).toBeGreaterThan(report.byAddress[0]!.tools[0]!.results.mean! * 3);
    // A page that stood after the first server's records counts only those.
    const first = JSON.parse((await get(`/api/tokens?upto=${small.length}`)).body) as UiTokenReport;
    expect(first.byAddress).toEqual([{ address: "127.0.0.1:9001", tools: costs(small).tools }]);
  });

  it("refuses past the record bytes it reads, and names stats --tokens instead", async () => {
    const get = await serve(lines, 1024);
    const answer = await get("/api/tokens");
    expect(answer.status).toBe(413);
    expect(answer.body).toContain("mcp-wiretap stats --tokens");
  });
});
