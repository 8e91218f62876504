/**
 * `mcp-wiretap demo`, run as a newcomer runs it (the built CLI, no terminal): what it prints, what its logs
 * hold, and that nothing else is left behind.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRecords, runCli, type LogRecord } from "../helpers/proxy-harness.js";
import { tempDir } from "../helpers/stdio-shim.js";
import { DEMO_SECRET } from "../../src/demo/run-demo.js";

const dir = tempDir("mcp-wiretap-demo-test-");
const logDir = path.join(dir, "logs");
const tmp = path.join(dir, "tmp");
let run: Awaited<ReturnType<typeof runCli>>;
let logs: string[];
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  mkdirSync(tmp);
  run = await runCli(["demo", "--log-dir", logDir], { timeoutMs: 60_000, env: { TMPDIR: tmp, NO_COLOR: "1" } });
  logs = readdirSync(logDir).map((f) => path.join(logDir, f));
}, 70_000);

const rpc = (records: LogRecord[], method: string, kind: string, tool?: string): LogRecord | undefined =>
  records.find((r) => r.event === "rpc" && r.method === method && r.kind === kind && (tool === undefined || r.tool === tool));

describe("mcp-wiretap demo", () => {
  it("prints the session with its records, the UI's address and the logs it leaves, and exits 0", () => {
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(/UI: http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    expect(run.stdout).toContain("── HTTPS:");
    expect(run.stdout).toContain("── stdio:");
    expect(run.stdout).toContain('progress: "page 3 of 3"');
    // The denied call's answer is the policy's error, over both transports.
    expect(run.stdout.match(/error: "blocked by mcp-wiretap policy: no-mass-delete"/g)?.length, run.stdout).toBe(2);
    expect(run.stdout).toMatch(/tools\/list +FLAG detector:poisoning/);
    expect(run.stdout).toContain('"api_key":"[redacted: github_token]"');
    for (const log of logs) expect(run.stdout).toContain(log);
    expect(run.stdout).not.toContain(DEMO_SECRET);
  });

  it("leaves the two logs it names and nothing in the temporary folder", () => {
    expect(logs).toHaveLength(2);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("records the flagged description, the redacted token and the denied call, over HTTPS and stdio", async () => {
    for (const log of logs) {
      expect(readFileSync(log, "utf8")).not.toContain(DEMO_SECRET);
      const records = await readRecords(log);
      const transport = log.includes("demo-https") ? "streamable-http" : "stdio";
      expect(records.some((r) => r.event === "rpc" && r.transport === transport), log).toBe(true);
      const list = rpc(records, "tools/list", "response");
      expect(list?.decision, log).toMatchObject({ action: "flag" });
      expect(JSON.stringify(list?.decision), log).toMatch(/detector:poisoning/);
      const call = rpc(records, "tools/call", "request", "search_docs");
      expect(JSON.stringify(call?.decision), log).toMatch(/detector:secrets/);
      const denied = rpc(records, "tools/call", "request", "delete_everything");
      expect(denied?.decision, log).toMatchObject({ action: "deny", enforced: true, rules: [expect.objectContaining({ name: "no-mass-delete" })] });
      expect(records.at(-1)?.event, log).toBe("stop");
    }
  });
});
