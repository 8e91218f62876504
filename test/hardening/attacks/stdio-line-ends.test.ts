/**
 * Receivers disagree on where a stdio line ends. The proxy split at LF and JSON.parse read a bare CR as
 * whitespace, so the line below was one allowed `tools/call echo` to it; the Python SDK's stdio server reads
 * stdin through TextIOWrapper (universal newlines: CR ends a line too), and read three lines, the middle one
 * a denied call that it ran. Enforce mode passed the denied call to the server and its result to the client;
 * monitor mode recorded only `echo`, so `check --forbid-tool delete_everything` passed. The server here is a
 * Python one that reads as the SDK does (test/helpers/reference-readers.py serve).
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, type LogRecord } from "../../helpers/proxy-harness.js";
import { records, rpcRecords, tempDir } from "../../helpers/stdio-shim.js";
import { PYTHON, READERS_PY, throughShim } from "../../helpers/stdio-raw.js";

const PAYLOAD =
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":\r{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}\r}}}\n';

const dir = tempDir();
const policyFile = (mode: string): string => {
  const file = path.join(dir, `${mode}.yaml`);
  writeFileSync(file, `mode: ${mode}\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n`);
  return file;
};

async function run(mode: "enforce" | "monitor"): Promise<{ executed: string; toClient: string; rpc: LogRecord[]; logFile: string }> {
  const logFile = path.join(dir, `${mode}.ndjson`);
  const executed = path.join(dir, `${mode}.executed`);
  writeFileSync(executed, "");
  const result = await throughShim(["--log-file", logFile, "--ca-dir", dir, "--config", policyFile(mode)], [PYTHON!, READERS_PY, "serve"], Buffer.from(PAYLOAD), { EXECUTED: executed });
  expect(result.code, result.stderr).toBe(0);
  return { executed: readFileSync(executed, "utf8"), toClient: result.toClient.toString(), rpc: rpcRecords(await records(logFile)), logFile };
}

const hiddenCall = (rpc: LogRecord[]): LogRecord | undefined => rpc.find((r) => r.direction === "client_to_server" && r.kind === "request" && r.tool === "delete_everything");

describe.skipIf(!PYTHON)("a denied call hidden behind bare CRs in an allowed call's line (a Python SDK server)", () => {
  it("the reference server does read three lines and run the hidden call (the harness sees it)", () => {
    // Without the proxy: the Python reader runs delete_everything.
    const executed = path.join(dir, "direct.executed");
    writeFileSync(executed, "");
    spawnSync(PYTHON!, [READERS_PY, "serve"], { input: PAYLOAD, env: { EXECUTED: executed }, timeout: 10_000 });
    expect(readFileSync(executed, "utf8")).toContain('"tool": "delete_everything"');
  });

  it("enforce: the line is refused whole; the server runs nothing, the client gets -32052, the hidden call is recorded denied", async () => {
    const { executed, toClient, rpc } = await run("enforce");
    expect(executed).toBe("");
    expect(toClient).not.toContain("ran delete_everything");
    const answers = toClient.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } });
    expect(answers).toContainEqual({ jsonrpc: "2.0", id: 1, error: expect.objectContaining({ code: -32052, message: expect.stringMatching(/CR/) }) });
    const hidden = hiddenCall(rpc);
    expect(hidden).toMatchObject({ method: "tools/call", decision: { action: "deny", enforced: true }, readability: { reason: expect.stringMatching(/CR/) } });
  }, 30_000);

  it("monitor: forwarded unchanged; the hidden call is a tools/call record of its own with the line-end doubt, and check fails on it", async () => {
    const { executed, rpc, logFile } = await run("monitor");
    // Monitor mode forwards unchanged: the Python server does run it, and the log must say so.
    expect(executed).toContain('"tool": "delete_everything"');
    const hidden = hiddenCall(rpc);
    expect(hidden).toMatchObject({ method: "tools/call", id: 2, decision: { action: "deny", enforced: false }, readability: { reason: expect.stringMatching(/CR/) } });
    expect((hidden!.decision as { rules: unknown[] }).rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "flag" }));
    // Its answer came back and is tied to it.
    expect(rpc.find((r) => r.direction === "server_to_client" && r.id === 2)).toMatchObject({ method: "tools/call", tool: "delete_everything" });
    const check = await runCli(["check", "--fail-on", "error", "--forbid-tool", "delete_everything", logFile]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("delete_everything");
  }, 30_000);
});
