/**
 * Enforce mode over stdio: a denied call is answered with the policy error and never reaches the server;
 * a line the shim cannot read unambiguously never reaches it either; other calls work.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { POLICY_DENIED_CODE } from "../../src/mcp/jsonrpc.js";
import { UNREADABLE_CODE } from "../../src/mcp/jsonrpc.js";
import { CLI_MAIN, NODE_BIN, REPO_ROOT } from "../helpers/proxy-harness.js";
import { connectStdio, records, rpcRecords, SCRIPTED_STDIO, tempDir } from "../helpers/stdio-shim.js";
import { waitUntil } from "../helpers/wait-until.js";

const dir = tempDir();
const policy = path.join(dir, "policy.yaml");
writeFileSync(
  policy,
  `mode: enforce
rules:
  - name: no-stray
    action: deny
    reason: prints on the protocol channel
    match: { method: tools/call, tool: stray }
detectors: { poisoning: deny }
rateLimits:
  - name: two-echoes-a-minute
    match: { tool: echo, direction: client_to_server }
    perMinute: 2
`,
);

describe("stdio: enforce mode", () => {
  it("denies a tool: the client gets the policy error, the server never sees the call, other calls work", async () => {
    const logFile = path.join(dir, "deny.ndjson");
    const received = path.join(dir, "deny.received");
    const run = await connectStdio([SCRIPTED_STDIO], { logFile, args: ["--config", policy] }, { env: { RECEIVED_LOG: received } });
    const denied = await run.client.callTool({ name: "stray", arguments: {} }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(denied).toBeInstanceOf(McpError);
    expect((denied as McpError).code).toBe(POLICY_DENIED_CODE);
    expect((denied as McpError).data).toEqual({ rules: [{ name: "no-stray", reason: "prints on the protocol channel" }] });
    expect(await run.client.callTool({ name: "echo", arguments: { message: "allowed" } })).toEqual({ content: [{ type: "text", text: "Echo: allowed" }] });
    await run.close();
    const seen = readFileSync(received, "utf8");
    expect(seen).toContain('"echo"');
    expect(seen).not.toContain('"stray"');
    const rpc = rpcRecords(await records(logFile));
    const call = rpc.find((r) => r.tool === "stray" && r.kind === "request")!;
    expect(call.decision).toMatchObject({ action: "deny", enforced: true, effect: "not forwarded; the client got a policy error" });
    // Answered by the shim: not left pending, so not reported unanswered.
    expect(rpc.filter((r) => r.kind === "unanswered")).toEqual([]);
  }, 30_000);

  it("rate limits and schema checks apply to stdio messages as to HTTP ones", async () => {
    const logFile = path.join(dir, "limits.ndjson");
    const run = await connectStdio([SCRIPTED_STDIO], { logFile, args: ["--config", policy] });
    await run.client.listTools();
    const outcomes: unknown[] = [];
    // The second call's argument has the wrong type for the tool's inputSchema (flagged, not denied).
    for (const message of ["a", 2, "c"]) {
      outcomes.push(await run.client.callTool({ name: "echo", arguments: { message } }).then(() => "answered", (e: McpError) => e.code));
    }
    await run.close();
    expect(outcomes).toEqual(["answered", "answered", POLICY_DENIED_CODE]);
    const rpc = rpcRecords(await records(logFile));
    const calls = rpc.filter((r) => r.kind === "request" && r.tool === "echo");
    expect(calls.map((r) => (r.decision as { rules: { name: string }[] }).rules.map((x) => x.name))).toEqual([
      [],
      ["detector:schema"],
      ["two-echoes-a-minute"],
    ]);
  }, 30_000);

  it("a poisoned tool is taken out of tools/list, the others remain", async () => {
    const logFile = path.join(dir, "poison.ndjson");
    const direct = await connectStdio([SCRIPTED_STDIO], undefined, { env: { POISON: "1" } });
    const directTools = (await direct.client.listTools()).tools.map((t) => t.name);
    await direct.close();
    const run = await connectStdio([SCRIPTED_STDIO], { logFile, args: ["--config", policy] }, { env: { POISON: "1" } });
    const tools = (await run.client.listTools()).tools.map((t) => t.name);
    await run.close();
    expect(directTools).toContain("daily_fact");
    expect(tools).toEqual(directTools.filter((n) => n !== "daily_fact"));
    const rec = rpcRecords(await records(logFile)).find((r) => r.method === "tools/list" && r.direction === "server_to_client")!;
    expect(rec.decision).toMatchObject({ action: "deny", enforced: true, effect: "removed tools: daily_fact" });
  }, 30_000);

  it("a line that is not JSON, not UTF-8 or names a member twice never reaches the server: the client gets an error and a record is kept", async () => {
    const logFile = path.join(dir, "unreadable.ndjson");
    const received = path.join(dir, "unreadable.received");
    const child = spawn(NODE_BIN, [CLI_MAIN, "stdio", "--log-file", logFile, "--ca-dir", dir, "--config", policy, "--", NODE_BIN, SCRIPTED_STDIO], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", RECEIVED_LOG: received },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const badUtf8 = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}}\n')]);
    child.stdin.write("this is not json\n");
    child.stdin.write(badUtf8);
    // Which tool is this? JSON.parse says get-env, a first-wins parser says echo.
    child.stdin.write('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{},"name":"get-env"}}\n');
    child.stdin.write('{"jsonrpc":"2.0","id":8,"method":"ping"}\n');
    await waitUntil(() => out.split("\n").length > 4, { timeoutMs: 10_000, what: "four answers" });
    child.stdin.end();
    await new Promise((resolve) => child.once("close", resolve));
    const answers = out.trim().split("\n").map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string }; result?: unknown });
    expect(answers).toEqual([
      { jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: UNREADABLE_CODE, message: expect.stringMatching(/not JSON/) }) },
      { jsonrpc: "2.0", id: 7, error: expect.objectContaining({ code: UNREADABLE_CODE, message: expect.stringMatching(/not valid UTF-8/) }) },
      { jsonrpc: "2.0", id: 9, error: expect.objectContaining({ code: UNREADABLE_CODE, message: expect.stringMatching(/member "name" appears twice/) }) },
      { jsonrpc: "2.0", id: 8, result: {} },
    ]);
    // What the server read: the ping alone.
    expect(readFileSync(received, "utf8")).toBe('{"jsonrpc":"2.0","id":8,"method":"ping"}\n');
    const rpc = rpcRecords(await records(logFile));
    expect(rpc.find((r) => r.kind === "invalid")).toMatchObject({ direction: "client_to_server", reason: expect.stringMatching(/not JSON.*not forwarded/) });
    // Read leniently, the bad-UTF-8 line is still recorded with its method and tool.
    expect(rpc.find((r) => r.id === 7 && r.direction === "client_to_server")).toMatchObject({ method: "tools/call", tool: "echo", reason: expect.stringMatching(/not valid UTF-8.*not forwarded/) });
  }, 30_000);
});
