/**
 * `tail -v` (arguments and results inline) and multi-round calls in the `tail` view: the CLI on the recorded
 * fixture log and on a hand-made 2026-07-28 exchange.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "../helpers/proxy-harness.js";
import { cleanLog, multiRound, removeLogs, writeLog } from "../analysis/hand-made.js";

const FIXTURE = path.join(REPO_ROOT, "test", "fixtures", "session.ndjson");
const tail = (args: string[]) => runCli(["tail", ...args], { env: { NO_COLOR: "1" } });

afterAll(removeLogs);

describe("tail -v", () => {
  it("puts a tool call's arguments and its result's text on one indented line each, under the message", async () => {
    const r = await tail(["-v", FIXTURE, "--tool", "echo"]);
    expect(r.code).toBe(0);
    const out = r.stdout.split("\n");
    const request = out.findIndex((l) => /→ request\s+#2 .*tools\/call echo/.test(l));
    expect(out[request + 1]).toBe(`${" ".repeat(63)}args {"message":"hello wiretap"}`);
    expect(out[request + 2]).toMatch(new RegExp(`^ {63}call [0-9a-f-]{36}#2$`));
    expect(out[request + 4]).toBe(`${" ".repeat(63)}result Echo: hello wiretap`);
  });

  it("cuts a long payload to one line and shows a truncated one's preview", async () => {
    const r = await tail(["-v", FIXTURE, "--method", "tools/list"]);
    const detail = r.stdout.split("\n").find((l) => l.trimStart().startsWith("result "))!;
    expect(detail.length).toBeLessThanOrEqual(63 + "result ".length + 120);
    expect(detail.endsWith("…")).toBe(true);
    expect(detail).toContain('{"tools":[{"name":"echo"');
  });

  it("without -v the view is one line per record, and -v is not --version after a command", async () => {
    const plain = await tail([FIXTURE, "--tool", "echo"]);
    expect(plain.stdout).not.toContain("args {");
    expect((await runCli(["-v"])).stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("tail and multi-round calls", () => {
  it("marks ⟳ input required, and draws the retry and its answer in the same tree", async () => {
    const file = await writeLog([...cleanLog().slice(0, -1), ...multiRound()]);
    const rows = (await tail([file, "--tool", "ask"])).stdout.trimEnd().split("\n");
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(/→ request\s+#10\s.*tools\/call ask$/);
    expect(rows[1]).toMatch(/← ├ response\s+#10\s.*tools\/call ask  ⟳ input required$/);
    expect(rows[2]).toMatch(/→ ├ request\s+#11\s.*tools\/call ask  ⟳ round 2$/);
    expect(rows[3]).toMatch(/← └ response\s+#11\s.*tools\/call ask$/);
  });

  it("shows a tampered requestState on the retry", async () => {
    const file = await writeLog([...cleanLog().slice(0, -1), ...multiRound("forged")]);
    const out = (await tail([file, "--tool", "ask"])).stdout;
    expect(out).toMatch(/→ ├ request\s+#11 .*⟳ round 2  ⚠ requestState differs from the one the server issued \(tampered\?\)/);
  });
});
