/**
 * Real recorded runs for the analysis tests: the official SDK client talks to server-everything through
 * the proxy over Streamable HTTP and legacy HTTP+SSE; the log file is kept for the test to analyse.
 * Not a test file.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream } from "../helpers/mcp-upstream.js";
import { readRecords, startTestProxy, type LogRecord } from "../helpers/proxy-harness.js";

export interface RecordedRun {
  logFile: string;
  records: LogRecord[];
}

/** What the scenario does, so that tests can assert figures they know without reading the log. */
export const SCENARIO = {
  echoMessages: ["one", "two two", "three three three"],
  sums: [
    { a: 1, b: 2 },
    { a: 40, b: 2 },
  ],
  legacyEcho: "over the old transport",
} as const;

const dirs: string[] = [];

/**
 * One clean proxy run: Streamable HTTP (tools/list, three echo calls, two get-sum calls), then HTTP+SSE
 * (tools/list, one echo); the proxy is stopped, so the log ends with its stop record. `customize` changes the server (a tool's definition) before it serves.
 */
export async function recordRun(customize?: (server: McpServer) => void): Promise<RecordedRun> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-analysis-"));
  dirs.push(dir);
  const logFile = path.join(dir, "run.ndjson");
  const upstream = await startMcpUpstream(customize ? { customize } : {});
  const proxy = await startTestProxy({ logFile });
  try {
    const streamable = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "analysis-run" });
    try {
      await streamable.client.listTools();
      for (const message of SCENARIO.echoMessages) await streamable.client.callTool({ name: "echo", arguments: { message } });
      for (const args of SCENARIO.sums) await streamable.client.callTool({ name: "get-sum", arguments: args });
    } finally {
      await streamable.close();
    }
    const legacy = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "analysis-legacy" });
    try {
      await legacy.client.listTools();
      await legacy.client.callTool({ name: "echo", arguments: { message: SCENARIO.legacyEcho } });
    } finally {
      await legacy.close();
    }
  } finally {
    await proxy.stop("recorded").catch(() => undefined);
    await upstream.close();
  }
  return { logFile, records: await readRecords(logFile) };
}

export async function removeRuns(): Promise<void> {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}
