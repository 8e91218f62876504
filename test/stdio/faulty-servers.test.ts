/**
 * Servers that misbehave: the client sees through the shim what it sees directly, nothing hangs, and
 * every record is kept.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connectStdio, records, rpcRecords, SCRIPTED_STDIO, tempDir, type StdioRun } from "../helpers/stdio-shim.js";
import type { LogRecord } from "../helpers/proxy-harness.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

const dir = tempDir();

/** Runs `steps` directly and through the shim; returns both outcomes and the shim's records. */
async function both(name: string, server: string[], steps: (run: StdioRun) => Promise<unknown>, extraArgs: string[] = []): Promise<{ direct: unknown; shimmed: unknown; all: LogRecord[] }> {
  const logFile = path.join(dir, `${name}.ndjson`);
  const outcome = async (shim: boolean): Promise<unknown> => {
    const run = await connectStdio(server, shim ? { logFile, args: ["--name", name, ...extraArgs] } : undefined);
    try {
      return await steps(run);
    } finally {
      await run.close();
    }
  };
  const direct = await outcome(false);
  const shimmed = await outcome(true);
  return { direct, shimmed, all: await records(logFile) };
}

const settle = (p: Promise<unknown>): Promise<unknown> => p.then((v) => ({ ok: v }), (e: Error) => ({ error: e.message }));

describe("stdio: misbehaving servers", () => {
  it("a stray line on stdout: forwarded as it is, recorded invalid with a reason", async () => {
    const { direct, shimmed, all } = await both("stray", [SCRIPTED_STDIO], async ({ client }) => [
      await settle(client.callTool({ name: "stray", arguments: {} })),
      await settle(client.callTool({ name: "echo", arguments: { message: "still here" } })),
    ]);
    expect(shimmed).toEqual(direct);
    expect(JSON.stringify(shimmed)).toContain("Echo: still here");
    const invalid = rpcRecords(all).filter((r) => r.kind === "invalid");
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ direction: "server_to_client", transport: "stdio", server: "stdio:stray" });
    expect(String(invalid[0]!.reason)).toMatch(/not JSON/);
    expect(rpcRecords(all).filter((r) => r.kind === "response" && r.method === "tools/call").map((r) => r.tool)).toEqual(["stray", "echo"]);
    expectRecordsMatchSchemas(all, "start", "rpc", "session", "stop");
  }, 30_000);

  it("a 20 MiB line: forwarded whole and recorded uninspected; the client fails as it does directly", async () => {
    const { direct, shimmed, all } = await both("huge", [SCRIPTED_STDIO], async ({ client }) => [
      await settle(client.callTool({ name: "huge", arguments: { mib: 20 } }, undefined, { timeout: 25_000 })),
      await settle(client.callTool({ name: "echo", arguments: { message: "after" } })),
    ]);
    // The SDK client reads at most 10 MiB per line: it drops the connection, with or without the shim.
    expect(shimmed).toEqual(direct);
    const rpc = rpcRecords(all);
    const big = rpc.filter((r) => r.kind === "invalid" && r.direction === "server_to_client");
    expect(big).toHaveLength(1);
    // All of it, or (on a slow machine) what the server wrote before the client's close stopped it.
    expect(big[0]!.bytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(String(big[0]!.reason)).toMatch(/larger than --max-inspect-bytes .*forwarded uninspected/);
    // The request the big line answered is not left unexplained: reported unanswered when the session ends.
    expect(rpc.filter((r) => r.kind === "unanswered").map((r) => r.tool)).toEqual(["huge"]);
  }, 60_000);

  it("a line over --max-inspect-bytes that the client can read: it gets every byte, and the session goes on", async () => {
    const { direct, shimmed, all } = await both(
      "big",
      [SCRIPTED_STDIO],
      async ({ client }) => [
        await settle(client.callTool({ name: "huge", arguments: { mib: 2 } })),
        await settle(client.callTool({ name: "echo", arguments: { message: "after" } })),
      ],
      ["--max-inspect-bytes", String(1024 * 1024)],
    );
    expect(shimmed).toEqual(direct);
    expect(JSON.stringify(shimmed)).toContain("x".repeat(2 * 1024 * 1024));
    expect(JSON.stringify(shimmed)).toContain("Echo: after");
    const rpc = rpcRecords(all);
    expect(rpc.filter((r) => r.kind === "invalid").map((r) => r.reason)).toEqual([expect.stringMatching(/line of \d+ bytes is larger than --max-inspect-bytes \(1048576\): forwarded uninspected/)]);
    expect(rpc.some((r) => r.kind === "response" && r.tool === "echo")).toBe(true);
  }, 60_000);

  it("a server that exits mid-call: the client sees the connection close, the call is recorded unanswered", async () => {
    const { direct, shimmed, all } = await both("exits", [SCRIPTED_STDIO], async ({ client }) => [
      await settle(client.callTool({ name: "exit", arguments: {} }, undefined, { timeout: 5000 })),
    ]);
    expect(shimmed).toEqual(direct);
    expect(JSON.stringify(shimmed)).toMatch(/Connection closed/);
    const unanswered = rpcRecords(all).filter((r) => r.kind === "unanswered");
    expect(unanswered).toHaveLength(1);
    expect(unanswered[0]).toMatchObject({ method: "tools/call", tool: "exit", reason: "session ended (server exited with code 3)" });
    expect(all.filter((r) => r.event === "stderr").map((r) => r.line)).toContain("exiting mid-call");
    expect(all.at(-1)).toMatchObject({ event: "stop", exitCode: 3 });
    expectRecordsMatchSchemas(all, "start", "rpc", "stderr", "stop");
  }, 30_000);

  it("a server that never reads stdin: initialize times out as it does directly, and closing ends everything", async () => {
    const logFile = path.join(dir, "deaf.ndjson");
    const attempt = async (shim: boolean): Promise<unknown> => {
      const started = Date.now();
      const outcome = await settle(connectStdio([SCRIPTED_STDIO, "deaf"], shim ? { logFile, args: ["--name", "deaf"] } : undefined, { timeoutMs: 1000 }));
      return { outcome, fast: Date.now() - started < 10_000 };
    };
    const direct = await attempt(false);
    const shimmed = await attempt(true);
    expect(shimmed).toEqual(direct);
    expect(JSON.stringify(shimmed)).toMatch(/timed out/i);
    const all = await records(logFile);
    const rpc = rpcRecords(all);
    // The client gave up with a cancellation, tied to its request (so not reported unanswered as well).
    expect(rpc.map((r) => `${String(r.kind)} ${String(r.method)}`)).toEqual(["request initialize", "notification notifications/cancelled"]);
    expect(rpc[1]!.related).toMatchObject({ id: rpc[0]!.id, method: "initialize" });
    expect(all.at(-1)).toMatchObject({ event: "stop" });
  }, 30_000);
});
