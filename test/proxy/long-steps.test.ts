/**
 * Through the running proxy (in this process, a plain-HTTP upstream and client that do little work of their
 * own): 8 MB `tools/list` answers (100 tools with 80 KB schemas), whose content scan held the loop for
 * 300–400 ms in one piece, are judged in steps that stay under the bench's `/healthz` target (issue 33).
 * What is left of such a step is what reads the whole answer once each: its parse, its tools' digests, the
 * tool catalog, the record's payload hash.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { longestStep } from "../helpers/longest-step.js";
import { startTestProxy, type LogRecord, type TestProxy } from "../helpers/proxy-harness.js";

/** The bench's `/healthz` target; before the fix these answers took 230–390 ms in one step. */
const LONGEST_STEP_MS = 250;

const TOOLS_ANSWER = (id: unknown): Buffer => {
  const schema = { type: "object", properties: { blob: { type: "string", description: "s".repeat(80 * 1024) } } };
  const tools = Array.from({ length: 100 }, (_, i) => ({ name: `tool_${String(id)}_${i}`, description: "d", inputSchema: schema }));
  return Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, result: { tools } }));
};

describe("long answers through the proxy", () => {
  let proxy: TestProxy;
  let upstream: http.Server;
  let upstreamHost: string;

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const { id, method } = JSON.parse(Buffer.concat(chunks).toString()) as { id: number; method: string };
        res.writeHead(200, { "content-type": "application/json" });
        res.end(method === "tools/list" ? TOOLS_ANSWER(id) : JSON.stringify({ jsonrpc: "2.0", id, result: {} }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamHost = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await startTestProxy();
  });
  afterAll(async () => {
    await proxy?.stop();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
  });

  /** A request through the proxy (plain HTTP, absolute URL); resolves once its answer is read (and dropped). */
  const send = (path: string, body: Buffer): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: proxy.port, method: "POST", path: `http://${upstreamHost}${path}`, agent: false, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", () => resolve(res.statusCode ?? 0));
          res.on("close", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  const rpcOf = (id: number, direction: string) => (r: LogRecord) => r.event === "rpc" && r.id === id && r.direction === direction;

  it("8 MB tools/list answers are judged in steps shorter than the /healthz target", async () => {
    const worst = await longestStep(async () => {
      for (let id = 11; id <= 12; id++) expect(await send("/mcp", Buffer.from(JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list" })))).toBe(200);
      await proxy.waitForRecord(rpcOf(12, "server_to_client"), { timeoutMs: 30_000 });
    });
    expect(worst).toBeLessThan(LONGEST_STEP_MS);
  }, 60_000);
});
