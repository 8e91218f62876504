/**
 * `mcp-wiretap replay` against a real server: the official SDK client makes a capture of server-everything
 * through the proxy (Streamable HTTP and legacy HTTP+SSE), then the built CLI replays calls from it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { readRecords, runCli, startTestProxy, testCaFile, type LogRecord } from "../helpers/proxy-harness.js";
import { copyOfCapture } from "./capture-copy.js";
import { loadPolicy } from "../../src/pipeline/record-pipeline.js";
import { replayOverHttp } from "../../src/replay/http-replay.js";
import { sessionPlan, targetUrl } from "../../src/replay/replay-call.js";
import { findBySelector } from "../../src/replay/selection.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

let dir: string;
let upstream: McpUpstream;
let capture: string;
let caDir: string;
let echoSelector: string;


function replay(args: string[], timeoutMs = 30_000) {
  return runCli(["replay", ...args, "--upstream-ca", testCaFile(), "--ca-dir", caDir], { timeoutMs });
}

const replayRecords = (records: LogRecord[]) => records.filter((r) => r.replayOf !== undefined);

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-replay-"));
  caDir = path.join(dir, "ca");
  capture = path.join(dir, "capture.ndjson");
  upstream = await startMcpUpstream({
    customize: (server: McpServer) => {
      server.registerTool("wipe-disk", { description: "Erases everything", annotations: { destructiveHint: true } }, () => ({ content: [{ type: "text", text: "wiped" }] }));
      server.registerTool("peek", { description: "Reads a value", annotations: { readOnlyHint: true } }, () => ({ content: [{ type: "text", text: "peeked" }] }));
    },
  });
  const proxy = await startTestProxy({ logFile: capture, caDir });
  try {
    const s = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "capture-client" });
    await s.client.listTools();
    await s.client.callTool({ name: "echo", arguments: { message: "hello" } });
    await s.client.callTool({ name: "wipe-disk", arguments: {} });
    await s.client.callTool({ name: "peek", arguments: {} });
    await s.close();
    const legacy = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "capture-legacy" });
    await legacy.client.listTools();
    await legacy.client.callTool({ name: "echo", arguments: { message: "over the old transport" } });
    await legacy.close();
  } finally {
    await proxy.stop("captured");
  }
  const echo = (await readRecords(capture)).find((r) => r.event === "rpc" && r.kind === "request" && r.tool === "echo" && r.transport === "streamable-http")!;
  echoSelector = `${echo.flow as string}#${String(echo.id)}`;
}, 60_000);

afterAll(async () => {
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("replay over Streamable HTTP", () => {
  it("replays echo with an edited message: the new echo, records marked replayOf, a fresh session named as a replay", async () => {
    const log = copyOfCapture(capture, "edited");
    const before = upstream.counters.toolCallsByName.get("echo") ?? 0;
    const run = await replay([log, "--call", echoSelector, "--set", 'arguments.message="edited by replay"', "--yes", "--diff"]);
    expect(run.stderr).toContain(`${echoSelector} tools/call echo`);
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout.slice(0, run.stdout.indexOf("\n}\n") + 2)) as { result: { content: { text: string }[] } };
    expect(answer.result.content[0]!.text).toBe("Echo: edited by replay");
    expect(run.stdout).toContain("--- captured");
    expect(run.stdout).toMatch(/^-.*Echo: hello/m);
    expect(run.stdout).toMatch(/^\+.*Echo: edited by replay/m);
    expect(upstream.counters.toolCallsByName.get("echo")).toBe(before + 1);

    const records = await readRecords(log);
    const replayed = replayRecords(records);
    expect(new Set(replayed.map((r) => r.replayOf))).toEqual(new Set([echoSelector]));
    const request = replayed.find((r) => r.event === "rpc" && r.kind === "request" && r.method === "tools/call")!;
    expect(request.params).toEqual({ name: "echo", arguments: { message: "edited by replay" } });
    expect(request.decision).toMatchObject({ action: "allow" });
    const start = replayed.find((r) => r.event === "session" && r.phase === "start")!;
    expect(start.clientInfo).toMatchObject({ name: "mcp-wiretap-replay" });
    const original = records.find((r) => r.event === "session" && r.phase === "start" && r.replayOf === undefined)!;
    expect(start.session).not.toBe(original.session);
    expect(start.protocolVersion).toBe(original.protocolVersion);
    expect(replayed.some((r) => r.event === "http" && r.method === "DELETE")).toBe(true);
    expectRecordsMatchSchemas(replayed);

    // The selector is the one tail -v prints under the captured request; the replay is marked as such there.
    const tail = await runCli(["tail", "-v", log, "--tool", "echo"], { env: { NO_COLOR: "1" } });
    expect(tail.stdout).toContain(`call ${echoSelector}\n`);
    expect(tail.stdout).toMatch(/tools\/call echo\s+↻ replay/);
    expect(tail.stdout).toContain(`↻ replay of ${echoSelector}`);
    const stats = JSON.parse((await runCli(["stats", log, "--json", "--tool", "echo"])).stdout) as { totals: { calls: number; replays: number } };
    expect(stats.totals).toMatchObject({ replays: 1 });
  }, 30_000);

  it("--last with tail's filter tokens picks the latest matching call; --header values are sent but never recorded", async () => {
    const log = copyOfCapture(capture, "last");
    const secret = "s3cr3t-replay-credential-0123456789";
    const run = await replay([log, "--last", "tool:peek", "--header", `X-Api-Key: ${secret}`]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("peeked");
    const text = readFileSync(log, "utf8");
    expect(text).toContain('"replayOf"');
    expect(text).not.toContain(secret);
    expect(run.stdout + run.stderr).not.toContain(secret);
  }, 30_000);

  it("a tool the capture marks destructive, without --yes and without a terminal, is refused saying what to pass", async () => {
    const log = copyOfCapture(capture, "destructive");
    const before = upstream.counters.toolCallsByName.get("wipe-disk") ?? 0;
    const run = await replay([log, "--last", "tool:wipe-disk"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("destructive");
    expect(run.stderr).toContain("--yes");
    expect(upstream.counters.toolCallsByName.get("wipe-disk") ?? 0).toBe(before);
    // An edit of the read-only peek that names wipe-disk is asked about as wipe-disk.
    const renamed = await replay([log, "--last", "tool:peek", "--set", 'name="wipe-disk"']);
    expect(renamed.code).toBe(2);
    expect(renamed.stderr).toContain("wipe-disk destructive");
    expect(upstream.counters.toolCallsByName.get("wipe-disk") ?? 0).toBe(before);
    expect(replayRecords(await readRecords(log))).toEqual([]);
  }, 30_000);

  it("enforce mode denies a replay whose edited arguments the policy forbids: the server never gets it", async () => {
    const log = copyOfCapture(capture, "enforce");
    const policy = path.join(dir, "enforce.yaml");
    writeFileSync(policy, ["mode: enforce", "default: allow", "rules:", "  - name: no-forbidden-echo", "    action: deny", "    reason: not this message", "    match:", "      tool: echo", '      args: { message: "re:forbidden" }', ""].join("\n"));
    const before = upstream.counters.toolCallsByName.get("echo") ?? 0;
    const run = await replay([log, "--call", echoSelector, "--set", 'arguments.message="forbidden words"', "--yes", "--config", policy]);
    expect(run.code).toBe(1);
    expect(run.stdout + run.stderr).toContain("no-forbidden-echo");
    expect(upstream.counters.toolCallsByName.get("echo") ?? 0).toBe(before);
    const denied = replayRecords(await readRecords(log)).find((r) => r.event === "rpc" && r.kind === "request" && r.method === "tools/call")!;
    expect(denied.decision).toMatchObject({ action: "deny", enforced: true });
    expect(denied.replayOf).toBe(echoSelector);
  }, 30_000);

  it("a replay given a running proxy's policy counts in that policy's rate limits (a UI replay cannot start its counters afresh)", async () => {
    const policyFile = path.join(dir, "one-call-a-minute.yaml");
    writeFileSync(policyFile, ["mode: enforce", "default: allow", "rateLimits:", "  - name: one-echo-a-minute", "    perMinute: 1", "    per: server", "    match:", "      method: tools/call", ""].join("\n"));
    const running = await loadPolicy(policyFile, path.join(dir, "shared-pins"));
    const records = await readRecords(capture);
    const call = findBySelector(records as never, echoSelector);
    const before = upstream.counters.toolCallsByName.get("echo") ?? 0;
    const replayOnce = async (name: string) => {
      const log = path.join(dir, `${name}.ndjson`);
      const result = await replayOverHttp(
        { transport: "streamable-http", url: targetUrl(call, undefined), headers: {}, replayOf: echoSelector, timeoutMs: 20_000 },
        sessionPlan(call, call.params),
        { caDir, logFile: log, upstreamCa: [testCaFile()], insecureUpstream: false, policy: running },
      );
      return { result, records: await readRecords(log) };
    };
    const first = await replayOnce("rate-first");
    expect(Object.hasOwn(first.result.answer.message, "result")).toBe(true);
    // The second replay, with its own proxy, meets the counter the first one moved.
    const second = await replayOnce("rate-second");
    expect(Object.hasOwn(second.result.answer.message, "error")).toBe(true);
    const denied = second.records.find((r) => r.event === "rpc" && r.kind === "request" && r.method === "tools/call")!;
    expect(denied.decision).toMatchObject({ action: "deny", enforced: true });
    expect(JSON.stringify(denied.decision)).toContain("one-echo-a-minute");
    expect(upstream.counters.toolCallsByName.get("echo") ?? 0).toBe(before + 1);
  }, 40_000);

  it("a 401 names --header", async () => {
    const log = copyOfCapture(capture, "unauthorized");
    const server = await import("node:http").then(({ createServer }) => createServer((_req, res) => res.writeHead(401, { "www-authenticate": "Bearer" }).end()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const run = await replay([log, "--call", echoSelector, "--yes", "--server", `http://127.0.0.1:${port}/mcp`]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("401");
      expect(run.stderr).toContain("--header 'Authorization: Bearer");
    } finally {
      server.close();
    }
  }, 30_000);

  it("--print-curl prints the handshake and the call, credentials as placeholders, and sends nothing", async () => {
    const log = copyOfCapture(capture, "curl");
    const run = await replay([log, "--call", echoSelector, "--header", "Authorization: Bearer top-secret-token", "--print-curl"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('"method":"initialize"');
    expect(run.stdout).toContain('"method":"notifications/initialized"');
    expect(run.stdout).toContain('"name":"echo"');
    expect(run.stdout).toContain("-X DELETE");
    expect(run.stdout).toContain("Authorization: <Authorization>");
    expect(run.stdout).not.toContain("top-secret-token");
    expect(replayRecords(await readRecords(log))).toEqual([]);
  }, 30_000);
});

describe("replay over legacy HTTP+SSE", () => {
  it("opens the stream, posts to its endpoint and prints the new echo", async () => {
    const log = copyOfCapture(capture, "legacy");
    const run = await replay([log, "--last", "tool:echo", "--set", 'arguments.message="legacy replay"', "--yes"]);
    // --last picks the latest echo: the legacy one.
    expect(run.stderr).toMatch(/tools\/call echo → https:\/\/127\.0\.0\.1:\d+\/sse/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Echo: legacy replay");
    const replayed = replayRecords(await readRecords(log)).filter((r) => r.event === "rpc");
    expect(replayed.every((r) => r.transport === "http+sse")).toBe(true);
    expect(replayed.some((r) => r.kind === "response" && r.method === "tools/call")).toBe(true);
  }, 30_000);
});
