/**
 * `mcp-wiretap replay --stdio`: a capture of server-everything made through `mcp-wiretap stdio` by the
 * official SDK client, replayed against a fresh launch of the same server.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NODE_BIN, readRecords, runCli } from "../helpers/proxy-harness.js";
import { connectStdio, EVERYTHING_STDIO, tempDir } from "../helpers/stdio-shim.js";
import { copyOfCapture } from "./capture-copy.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

let dir: string;
let capture: string;

beforeAll(async () => {
  dir = tempDir("mcp-wiretap-replay-stdio-");
  capture = path.join(dir, "capture.ndjson");
  const run = await connectStdio([EVERYTHING_STDIO, "stdio"], { logFile: capture, args: ["--name", "everything"] });
  await run.client.listTools();
  await run.client.callTool({ name: "echo", arguments: { message: "hello over stdio" } });
  await run.close();
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});


describe("replay over stdio", () => {
  it("launches the server given after --stdio --, replays the edited echo and records it with replayOf", async () => {
    const log = copyOfCapture(capture, "stdio");
    const run = await runCli(["replay", log, "--last", "tool:echo", "--set", 'arguments.message="stdio replay"', "--yes", "--ca-dir", path.join(dir, "pins"), "--stdio", "--", NODE_BIN, EVERYTHING_STDIO, "stdio"], { timeoutMs: 30_000 });
    expect(run.stderr).toContain("tools/call echo");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Echo: stdio replay");
    const records = await readRecords(log);
    const original = records.find((r) => r.event === "rpc" && r.kind === "request" && r.tool === "echo" && r.replayOf === undefined)!;
    const replayed = records.filter((r) => r.replayOf !== undefined);
    expect(new Set(replayed.map((r) => r.replayOf))).toEqual(new Set([`${original.flow as string}#${String(original.id)}`]));
    const request = replayed.find((r) => r.event === "rpc" && r.kind === "request" && r.tool === "echo")!;
    expect(request).toMatchObject({ transport: "stdio", server: "stdio:everything", params: { name: "echo", arguments: { message: "stdio replay" } } });
    expect(replayed.find((r) => r.event === "rpc" && r.kind === "request" && r.method === "initialize")!.params).toMatchObject({ clientInfo: { name: "mcp-wiretap-replay" } });
    expect(replayed.at(-1)).toMatchObject({ event: "stop", reason: "replay done" });
    expectRecordsMatchSchemas(replayed);
  }, 40_000);

  it("without --stdio and without a terminal: refused, showing the recorded command to pass", async () => {
    const log = copyOfCapture(capture, "no-command");
    const run = await runCli(["replay", log, "--last", "tool:echo", "--yes", "--ca-dir", path.join(dir, "pins")]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--stdio --");
    expect(run.stderr).toContain(path.basename(EVERYTHING_STDIO));
  }, 20_000);
});
