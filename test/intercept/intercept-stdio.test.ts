/**
 * `mcp-wiretap stdio --intercept`: the official SDK client launches server-everything through the built CLI;
 * echo calls and their answers (both directions) wait in the hold queue until released through the UI API.
 */
import { rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStdio, EVERYTHING_STDIO, records, tempDir, type StdioRun } from "../helpers/stdio-shim.js";
import { waitUntil } from "../helpers/wait-until.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";
import { heldList, openUi, release, waitHeld, type UiSession } from "./ui-client.js";

const TIMEOUT_S = 2;
let dir: string;
let logFile: string;
let run: StdioRun;
let ui: UiSession;

beforeAll(async () => {
  dir = tempDir();
  logFile = path.join(dir, "log.ndjson");
  run = await connectStdio([EVERYTHING_STDIO, "stdio"], { logFile, args: ["--name", "everything", "--payloads", "full", "--ui-port", "0", "--intercept", "tool:echo", "--intercept-timeout", String(TIMEOUT_S)] });
  await waitUntil(() => /UI: http:\/\/127\.0\.0\.1:\d+\/\?token=/.test(run.stderr()), { timeoutMs: 10_000, what: "the UI line on stderr" });
  ui = await openUi(/UI: (\S+)/.exec(run.stderr())![1]!);
}, 30_000);

afterAll(async () => {
  await run?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (result: unknown): string => ((result as { content: { text: string }[] }).content[0]?.text ?? "");

describe("stdio --intercept", () => {
  it("holds the call, then its answer; a line behind the held call waits for it; edits on both sides are what the peers read", async () => {
    const call = run.client.callTool({ name: "echo", arguments: { message: "typed by the client" } });
    const [held] = await waitHeld(ui);
    expect(held).toMatchObject({ direction: "client_to_server", tool: "echo" });
    // Not selected, but sent after the held line: it waits for it (lines go out in order).
    let summed = false;
    const sum = run.client.callTool({ name: "get-sum", arguments: { a: 40, b: 2 } }).then((r) => ((summed = true), r));
    await new Promise((r) => setTimeout(r, 300));
    expect(summed).toBe(false);
    const edited = structuredClone(held!.message) as { params: { arguments: { message: string } } };
    edited.params.arguments.message = "edited on the way in";
    expect((await release(ui, { hold: held!.hold, action: "edit", message: edited })).status).toBe(200);
    // The answer is held too (tool:echo selects it): the server's own reading of the edit is in it. The get-sum
    // answer, behind it, waits for it.
    const [answer] = await waitHeld(ui);
    expect(summed).toBe(false);
    expect(answer).toMatchObject({ direction: "server_to_client", tool: "echo" });
    expect(JSON.stringify(answer!.message)).toContain("Echo: edited on the way in");
    const out = structuredClone(answer!.message) as { result: { content: { text: string }[] } };
    out.result.content[0]!.text = "edited on the way out";
    expect((await release(ui, { hold: answer!.hold, action: "edit", message: out })).status).toBe(200);
    expect(text(await call)).toBe("edited on the way out");
    expect(text(await sum)).toContain("42");
    expect(await heldList(ui)).toEqual([]);
  }, 20_000);

  it("a call nobody releases is dropped after --intercept-timeout: the client gets -32054, the server never ran it", async () => {
    const err = await run.client.callTool({ name: "echo", arguments: { message: "nobody looks" } }, undefined, { timeout: 10_000 }).then(
      () => null,
      (e: { code?: number; message: string }) => e,
    );
    expect(err?.code).toBe(-32054);
    expect(err?.message).toMatch(/intercept timeout/);
  }, 15_000);

  it("records what was held and done, and the edits as messages of their own", async () => {
    const all = await records(logFile);
    const intercepts = all.filter((r) => r.event === "intercept");
    expect(intercepts.map((r) => [r.direction, r.action])).toEqual([
      ["client_to_server", "edited"],
      ["server_to_client", "edited"],
      ["client_to_server", "timeout"],
    ]);
    expect(intercepts[0]).toMatchObject({ transport: "stdio", server: "stdio:everything", message: { params: { arguments: { message: "typed by the client" } } }, edited: { params: { arguments: { message: "edited on the way in" } } } });
    const echoes = all.filter((r) => r.event === "rpc" && r.tool === "echo" && r.kind === "request").map((r) => (r.params as { arguments: { message: string } }).arguments.message);
    // What arrived, then what went out (judged and recorded again), then the call that timed out.
    expect(echoes).toEqual(["typed by the client", "edited on the way in", "nobody looks"]);
    expect(all.some((r) => r.event === "rpc" && r.kind === "response" && JSON.stringify(r.result ?? "").includes("nobody looks"))).toBe(false);
    expectRecordsMatchSchemas(all, "intercept", "rpc");
  });
});
