/**
 * The official SDK client launches server-everything through `mcp-wiretap stdio` and directly: every
 * answer is the same, and every message is recorded with its method, tool, argsHash, latency and pairing.
 */
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { describe, expect, it } from "vitest";
import { connectStdio, EVERYTHING_STDIO, records, rpcRecords, tempDir } from "../helpers/stdio-shim.js";
import type { LogRecord } from "../helpers/proxy-harness.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

async function scenario(client: Client): Promise<{ answers: unknown[]; progress: number[] }> {
  const progress: number[] = [];
  const answers: unknown[] = [];
  answers.push(client.getServerVersion(), client.getServerCapabilities());
  const tools = await client.listTools();
  answers.push(tools.tools.map((t) => t.name).sort());
  answers.push(await client.callTool({ name: "echo", arguments: { message: "hello over stdio" } }));
  answers.push(await client.callTool({ name: "get-sum", arguments: { a: 40, b: 2 } }));
  answers.push(
    await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      timeout: 15_000,
    }),
  );
  answers.push((await client.listResources()).resources.map((r) => r.uri));
  answers.push((await client.listPrompts()).prompts.map((p) => p.name));
  return { answers, progress };
}

describe("stdio: server-everything through the shim", () => {
  const dir = tempDir();
  const logFile = path.join(dir, "stdio.ndjson");
  let all: LogRecord[] = [];
  let direct: Awaited<ReturnType<typeof scenario>>;
  let shimmed: Awaited<ReturnType<typeof scenario>>;

  it("gives every answer a direct run gives", async () => {
    const d = await connectStdio([EVERYTHING_STDIO, "stdio"]);
    direct = await scenario(d.client);
    await d.close();
    const s = await connectStdio([EVERYTHING_STDIO, "stdio"], { logFile, args: ["--name", "everything"] });
    shimmed = await scenario(s.client);
    await s.close();
    expect(shimmed.answers).toEqual(direct.answers);
    // The SDK client now and then drops the last progress when the result comes right after it, directly too:
    // both runs see the progress values in order, the shim's run at least as many as the first two.
    for (const run of [direct, shimmed]) expect(run.progress).toEqual([1, 2, 3].slice(0, run.progress.length));
    expect(shimmed.progress.length).toBeGreaterThanOrEqual(2);
    // The server's stderr still reaches the client's.
    expect(s.stderr()).toContain("Starting default (STDIO) server");
  }, 60_000);

  it("records every message with method, tool, argsHash, latency and pairing", async () => {
    all = await records(logFile);
    const rpc = rpcRecords(all);
    expect(rpc.length).toBeGreaterThan(10);
    for (const r of rpc) {
      expect(r).toMatchObject({ transport: "stdio", server: "stdio:everything" });
      expect(r.kind).not.toBe("invalid");
    }
    const requests = rpc.filter((r) => r.kind === "request" && r.direction === "client_to_server");
    expect(requests.map((r) => r.method)).toEqual(
      expect.arrayContaining(["initialize", "tools/list", "tools/call", "resources/list", "prompts/list"]),
    );
    for (const req of requests) {
      const answers = rpc.filter((r) => r.direction === "server_to_client" && (r.kind === "response" || r.kind === "error") && r.id === req.id);
      expect(answers, `answer to ${String(req.method)} ${String(req.id)}`).toHaveLength(1);
      expect(answers[0]).toMatchObject({ method: req.method, tool: req.tool });
      expect(typeof answers[0]!.latencyMs).toBe("number");
    }
    const calls = requests.filter((r) => r.method === "tools/call");
    expect(calls.map((r) => r.tool)).toEqual(["echo", "get-sum", "trigger-long-running-operation"]);
    for (const c of calls) expect(c.argsHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const longCall = calls[2]!;
    const progress = rpc.filter((r) => r.method === "notifications/progress");
    expect(progress).toHaveLength(3); // all the server sent, before its result
    for (const p of progress) expect(p.related).toMatchObject({ id: longCall.id, method: "tools/call", tool: "trigger-long-running-operation" });
    expect(rpc.filter((r) => r.kind === "unanswered")).toEqual([]);
  });

  it("writes a session record at start and end, and the server's stderr lines", () => {
    const sessions = all.filter((r) => r.event === "session");
    expect(sessions.map((r) => r.phase)).toEqual(["start", "end"]);
    expect(sessions[0]).toMatchObject({ transport: "stdio", server: "stdio:everything", serverInfo: { name: "mcp-servers/everything" } });
    const stderr = all.filter((r) => r.event === "stderr");
    expect(stderr.map((r) => r.line)).toContain("Starting default (STDIO) server...");
    expect(all.at(-1)).toMatchObject({ event: "stop", server: "stdio:everything" });
    expectRecordsMatchSchemas(all, "start", "session", "rpc", "stderr", "stop");
  });
});
