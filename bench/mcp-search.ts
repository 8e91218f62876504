/**
 * `mcp-wiretap mcp` over a 100,000-record log (issue 27): the built CLI serves it on stdio to the official
 * SDK client; `search_messages` is timed on queries that scan the whole log (a word only the oldest record
 * has, `status:error`) and a typical one (`tool:echo`, first page). Memory: the server's RSS over that of the
 * same server on an empty log, beside the log's size, right after the tool calls and once settled (V8's memory
 * reducer collects some seconds after the process goes quiet: what `top` shows between calls).
 */
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { rssMiB } from "./child.ts";
import { REPO } from "./paths.ts";
import { percentile, round, summarize, type Summary } from "./stats.ts";
import { sleep } from "./time.ts";

export interface McpSearchResult {
  records: number;
  logMiB: number;
  loadMs: number;
  /** search_messages wall time seen by the client, per query. */
  queries: { query: string; hits: number; scanned: number; ms: Summary; p95: number | null }[];
  /** The other tools over the same log: the first call (which builds the call list) and the p50 of the next ones. */
  tools: { tool: string; firstMs: number; ms: Summary }[];
  rssMiB: number | null;
  emptyRssMiB: number | null;
  /** (RSS − RSS on an empty log) / log size, right after the tool calls: V8's heap headroom included. */
  memoryRatio: number | null;
  /** RSS once it stopped falling (sampled each second for SETTLE_S seconds after the tool calls), and its ratio. */
  settledRssMiB: number | null;
  settledRatio: number | null;
  /** What the served records hold once collected: (live heap after loading − before) / log size, measured in-process. */
  liveHeapRatio: number | null;
}

const CLI = path.join(REPO, "dist", "cli", "main.js");
const NODE = process.execPath;

/** A realistic log: sessions of tools/call exchanges (requests with arguments, results with text), some errors. */
export function writeLog(file: string, records: number): void {
  const lines: string[] = [];
  const tools = ["echo", "get-sum", "search-docs", "read-file"];
  let t = Date.parse("2026-11-01T00:00:00Z");
  for (let i = 0; lines.length < records; i++) {
    const session = `sess-${Math.floor(i / 200).toString(16).padStart(8, "0")}-4d2a-9c1e-000000000000`;
    const flow = `flow-${i.toString(16).padStart(8, "0")}-aaaa-bbbb-cccccccccccc`;
    const tool = tools[i % tools.length]!;
    const word = i === 0 ? "needle-in-the-oldest-record" : `word${i % 977}`;
    const common = { event: "rpc", flow, transport: "streamable-http", server: "api.example.com:443", path: "/mcp", session, protocolVersion: "2025-11-25" };
    const allow = { action: "allow", enforced: false, rules: [] };
    lines.push(JSON.stringify({ level: "info", time: new Date((t += 3)).toISOString(), ...common, direction: "client_to_server", kind: "request", id: i, method: "tools/call", tool, bytes: 180, decision: allow, argsHash: `sha256:${"ab".repeat(32)}`, params: { name: tool, arguments: { message: `please look up ${word} in the index and report what you find there` } } }));
    const failed = i % 50 === 7;
    lines.push(
      JSON.stringify(
        failed
          ? { level: "info", time: new Date((t += 9)).toISOString(), ...common, direction: "server_to_client", kind: "error", id: i, method: "tools/call", tool, bytes: 80, latencyMs: 9, decision: allow, error: { code: -32602, message: `Unknown argument for ${tool}` } }
          : { level: "info", time: new Date((t += 9)).toISOString(), ...common, direction: "server_to_client", kind: "response", id: i, method: "tools/call", tool, bytes: 240, latencyMs: 9, decision: allow, result: { content: [{ type: "text", text: `Result for ${word}: ${"lorem ipsum dolor sit amet ".repeat(6)}` }] } },
      ),
    );
  }
  writeFileSync(file, lines.slice(0, records).join("\n") + "\n", { mode: 0o600 });
}

async function connect(dir: string): Promise<{ client: Client; pid: number | null; loadMs: number }> {
  const started = performance.now();
  const transport = new StdioClientTransport({ command: NODE, args: [CLI, "mcp", dir], stderr: "ignore" });
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(transport);
  // `initialize` is answered at once; a tool answers once the log is read: a selector naming nothing is the cheapest.
  await client.callTool({ name: "get_exchange", arguments: { selector: "00000000-none#0" } });
  return { client, pid: transport.pid, loadMs: performance.now() - started };
}

const SETTLE_S = 12;

export async function runMcpSearch(tmp: string, { records = 100_000, repeats = 7, searchRepeats = 20 } = {}): Promise<McpSearchResult> {
  const dir = path.join(tmp, "mcp-search");
  const emptyDir = path.join(tmp, "mcp-search-empty");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  mkdirSync(emptyDir, { recursive: true, mode: 0o700 });
  const log = path.join(dir, "big.ndjson");
  writeLog(log, records);
  writeFileSync(path.join(emptyDir, "empty.ndjson"), "", { mode: 0o600 });
  const logMiB = statSync(log).size / 2 ** 20;

  const empty = await connect(emptyDir);
  await sleep(500);
  const emptyRss = empty.pid === null ? null : rssMiB(empty.pid);
  await empty.client.close();

  const { client, pid, loadMs } = await connect(dir);
  try {
    const queries: McpSearchResult["queries"] = [];
    for (const query of ["needle-in-the-oldest-record", "status:error", "tool:echo", "tool:get-sum word42"]) {
      const samples: number[] = [];
      let last: { hits: unknown[]; scanned: number } = { hits: [], scanned: 0 };
      for (let i = 0; i < searchRepeats; i++) {
        const t0 = performance.now();
        const result = await client.callTool({ name: "search_messages", arguments: { query, limit: 20 } });
        samples.push(performance.now() - t0);
        last = result.structuredContent as typeof last;
      }
      queries.push({ query, hits: last.hits.length, scanned: last.scanned, ms: summarize(samples), p95: round(percentile([...samples].sort((a, b) => a - b), 95)) });
    }
    const tools: McpSearchResult["tools"] = [];
    const oldest = "flow-00000007-aaaa-bbbb-cccccccccccc#7";
    for (const [tool, args] of [["recent_failures", {}], ["list_sessions", {}], ["get_exchange", { selector: oldest }], ["stats", {}]] as const) {
      const samples: number[] = [];
      for (let i = 0; i <= repeats; i++) {
        const t0 = performance.now();
        await client.callTool({ name: tool, arguments: args });
        samples.push(performance.now() - t0);
      }
      tools.push({ tool, firstMs: round(samples[0]!, 1) ?? 0, ms: summarize(samples.slice(1)) });
    }
    const rss = pid === null ? null : rssMiB(pid);
    let settled = rss;
    for (let i = 0; i < SETTLE_S && pid !== null; i++) {
      await sleep(1000);
      settled = rssMiB(pid);
    }
    return {
      tools,
      records,
      logMiB: round(logMiB, 1) ?? 0,
      loadMs: round(loadMs, 0) ?? 0,
      queries,
      rssMiB: rss,
      emptyRssMiB: emptyRss,
      memoryRatio: rss === null || emptyRss === null ? null : round((rss - emptyRss) / logMiB, 2),
      settledRssMiB: settled,
      settledRatio: settled === null || emptyRss === null ? null : round((settled - emptyRss) / logMiB, 2),
      liveHeapRatio: await liveHeapRatio(dir, logMiB),
    };
  } finally {
    await client.close();
  }
}

/** The served logs read in this process by the built modules, the heap measured after a full collection before and after. */
async function liveHeapRatio(dir: string, logMiB: number): Promise<number | null> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as (() => void) | undefined;
  if (typeof gc !== "function") return null;
  const { serveLogs } = (await import(pathToFileURL(path.join(REPO, "dist", "mcp-server", "served-logs.js")).href)) as { serveLogs: (paths: string[]) => Promise<{ index: { size: number }; ready: Promise<void>; close(): Promise<void> }> };
  gc();
  const before = process.memoryUsage().heapUsed;
  const logs = await serveLogs([dir]);
  await logs.ready;
  gc();
  const after = process.memoryUsage().heapUsed;
  const held = logs.index.size;
  await logs.close();
  return held === 0 ? null : round((after - before) / 2 ** 20 / logMiB, 2);
}
