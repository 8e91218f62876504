/**
 * The web UI over stdio servers: `mcp-wiretap stdio --ui` serves one launch's messages live while the server
 * runs, and `mcp-wiretap ui` with no argument serves every launch log of the per-user folder, following new
 * launches. Real parts: the SDK's StdioClientTransport, server-everything, the built CLI, the UI's HTTP API.
 */
import { rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { uiCommand } from "../../src/ui/server/serve-logs.js";
import { waitUntil } from "../helpers/wait-until.js";
import { connectStdio, EVERYTHING_STDIO, tempDir } from "../helpers/stdio-shim.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** The records the UI serves, as the page would fetch them (token cookie). */
function uiRecords(url: URL): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${url.port}/api/records`, { headers: { Cookie: `mcp_wiretap_ui_${url.port}=${url.searchParams.get("token")}` } }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`UI answered ${res.statusCode}`));
          resolve(body.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>));
        });
      })
      .on("error", reject);
  });
}

/** Polls the UI until `pick` finds what it wants (bounded). */
async function untilServed(url: URL, pick: (records: Record<string, unknown>[]) => boolean, what: string, timeoutMs = 15_000): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const records = await uiRecords(url);
    if (pick(records)) return records;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const echoCalls = (records: Record<string, unknown>[]): Record<string, unknown>[] =>
  records.filter((r) => r.event === "rpc" && r.method === "tools/call" && r.tool === "echo");

describe("stdio servers in the web UI", () => {
  it("stdio --ui serves the launch's messages live, and the URL is said on stderr", async () => {
    const dir = tempDir();
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const run = await connectStdio([EVERYTHING_STDIO, "stdio"], { logFile: path.join(dir, "log.ndjson"), args: ["--ui-port", "0"] });
    cleanup.push(() => run.close());
    await waitUntil(() => /UI: http:\/\/127\.0\.0\.1:\d+\/\?token=/.test(run.stderr()), { timeoutMs: 10_000, what: "the UI line on stderr" });
    const url = new URL(/UI: (\S+)/.exec(run.stderr())![1]!);
    await run.client.callTool({ name: "echo", arguments: { message: "seen in the UI" } });
    const calls = echoCalls(await untilServed(url, (r) => echoCalls(r).length === 2, "the echo call and its answer in the UI"));
    expect(calls.map((c) => c.kind)).toEqual(["request", "response"]);
    expect(calls[0]).toMatchObject({ transport: "stdio", server: "stdio:node" });
  });

  it("`mcp-wiretap ui` with no argument serves the per-user stdio log folder and follows launches made after it started", async () => {
    const state = tempDir("mcp-wiretap-state-");
    cleanup.push(() => rmSync(state, { recursive: true, force: true }));
    const env = { XDG_STATE_HOME: state };
    const stop = new AbortController();
    let ready: URL | undefined;
    const serving = uiCommand([], { uiPort: 0 }, { signal: stop.signal, env, onReady: (u) => (ready = new URL(u)) });
    cleanup.push(async () => {
      stop.abort();
      await serving;
    });
    await waitUntil(() => ready !== undefined, { timeoutMs: 10_000, what: "the UI server" });
    expect(await uiRecords(ready!)).toEqual([]);
    // A launch with no --log-file writes a new file in $XDG_STATE_HOME/mcp-wiretap/.
    const run = await connectStdio([EVERYTHING_STDIO, "stdio"], { logFile: null, pinsDir: path.join(state, "pins") }, { env });
    await run.client.callTool({ name: "echo", arguments: { message: "a later launch" } });
    await run.close();
    await untilServed(ready!, (r) => echoCalls(r).length === 2, "the new launch's echo call in the UI");
  });
});
