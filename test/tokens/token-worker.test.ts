/**
 * The worker thread that counts the web UI's token estimates: the counts are the tokenizer's; a thread
 * that cannot start or dies makes the ask fail with why (nothing counted on the caller's thread) and the
 * next ask starts a new one; an idle thread is ended.
 */
import { describe, expect, it } from "vitest";
import { countInThread, loadTokenCounter } from "../../src/tokens/token-counter.js";
import { TokenWorker } from "../../src/tokens/token-worker.js";
import { tokenReportInTurns } from "../../src/tokens/tokens-in-turns.js";
import { RecordHistory } from "../../src/ui/server/record-history.js";
import { tokenHandler } from "../../src/ui/server/token-endpoint.js";
import { serveHandler } from "../ui/server/serve-handler.js";

describe("token worker", () => {
  it("counts as the tokenizer does, batch after batch, and ends when idle", async () => {
    const worker = new TokenWorker({ idleMs: 50 });
    const count = await loadTokenCounter();
    const texts = ["hello world", '{"type":"object","properties":{"q":{"type":"string"}}}', ""];
    const [a, b] = await Promise.all([worker.count(texts), worker.count(["second batch"])]);
    expect(a).toEqual(texts.map(count));
    expect(b).toEqual([count("second batch")]);
    expect(worker.running).toBe(true);
    for (let i = 0; i < 100 && worker.running; i++) await new Promise((r) => setTimeout(r, 20));
    expect(worker.running).toBe(false);
    // Asked again: a new thread.
    expect(await worker.count(["again"])).toEqual([count("again")]);
    await worker.close();
    expect(worker.running).toBe(false);
  });

  it("once closed (its UI server closed), a late ask fails and starts no thread", async () => {
    const worker = new TokenWorker();
    expect(await worker.count(["hello"])).toHaveLength(1);
    await worker.close();
    await expect(worker.count(["late"])).rejects.toThrow(/closed/);
    expect(worker.running).toBe(false);
  });

  it("a report sent in many batches is the report counted in-thread", async () => {
    const worker = new TokenWorker();
    const rpc = (f: Record<string, unknown>) => JSON.stringify({ event: "rpc", server: `127.0.0.1:${9000 + (Number(f.id) % 3)}`, method: "tools/call", tool: `t${Number(f.id) % 7}`, ...f });
    // 3,000 calls: 6,000 texts, some 700 KB, three batches or more.
    const lines = Array.from({ length: 3000 }, (_, i) => [
      rpc({ flow: `f${i}`, id: i, kind: "request", params: { name: `t${i % 7}`, arguments: { q: `query ${i}` } } }),
      rpc({ flow: `f${i}`, id: i, kind: "response", result: { content: [{ type: "text", text: `result ${i} `.repeat(i % 40) }] } }),
    ]).flat();
    try {
      const report = await tokenReportInTurns(lines, worker.count);
      expect(report.byAddress).toHaveLength(3);
      expect(report).toEqual(await tokenReportInTurns(lines, countInThread));
    } finally {
      await worker.close();
    }
  });

  it("a thread that dies fails its asks with why, and the endpoint answers 500 saying so", async () => {
    // A tokenizer module that ends its thread as it loads.
    const worker = new TokenWorker({ tokenizerUrl: "data:text/javascript,process.exit(7)" });
    await expect(worker.count(["x"])).rejects.toThrow("the token counter stopped (exit code 7)");
    const history = new RecordHistory();
    history.append(JSON.stringify({ event: "rpc", kind: "response", method: "tools/list", id: 1, server: "127.0.0.1:1", result: { tools: [{ name: "t" }] } }));
    const server = await serveHandler(tokenHandler(history, worker.count));
    try {
      const answer = await server.get("/api/tokens");
      expect(answer.status).toBe(500);
      expect(answer.body).toContain("the token counter stopped (exit code 7)");
    } finally {
      await server.close();
      await worker.close();
    }
  });

  it("a tokenizer that cannot load fails the ask with its error", async () => {
    const worker = new TokenWorker({ tokenizerUrl: "file:///nonexistent/o200k_base.js" });
    await expect(worker.count(["x"])).rejects.toThrow(/the token counter stopped: .*nonexistent/);
    await worker.close();
  });
});
