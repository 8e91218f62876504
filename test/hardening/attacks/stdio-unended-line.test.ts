/**
 * A call ended by a CR and never by an LF. A receiver that ends lines at CR (the Python SDK's stdin, Java's
 * readLine) runs it as soon as the next byte comes; the proxy frames at LF and held it as a line not yet
 * complete. When the session then ended by a signal (clients stop a stdio server with SIGTERM), the held bytes
 * were never read: in monitor mode the call the server ran had no record at all. (While the session lasts,
 * such a call is recorded only once an LF or the end comes; enforce mode never forwards it.)
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { assertBuilt, CLI_MAIN, NODE_BIN, REPO_ROOT } from "../../helpers/proxy-harness.js";
import { tempDir } from "../../helpers/stdio-shim.js";
import { PYTHON, READERS_PY } from "../../helpers/stdio-raw.js";

const dir = tempDir();
let kill: (() => void) | undefined;
afterEach(() => kill?.());

const DENIED = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;

it.skipIf(PYTHON === undefined)("monitor mode: a call a Python SDK server ran from a CR-ended line is recorded when the session ends by a signal", async () => {
  assertBuilt();
  const logFile = path.join(dir, "unended.ndjson");
  const executed = path.join(dir, "executed.ndjson");
  const policy = path.join(dir, "policy.yaml");
  writeFileSync(policy, "mode: monitor\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n");
  const shim = spawn(NODE_BIN, [CLI_MAIN, "stdio", "--config", policy, "--log-file", logFile, "--", PYTHON!, READERS_PY, "serve"], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", EXECUTED: executed },
    stdio: ["pipe", "pipe", "pipe"],
  });
  kill = () => shim.kill("SIGKILL");
  shim.stdout.resume();
  shim.stderr.resume();
  // The CR ends the call for the server; the space after it lets Python's newline decoder see it is no CRLF.
  shim.stdin.write(`${DENIED}\r `);
  const deadline = Date.now() + 10_000;
  while (!(existsSync(executed) && readFileSync(executed, "utf8").includes("delete_everything")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(readFileSync(executed, "utf8")).toContain("delete_everything");
  const exited = new Promise((r) => shim.once("exit", r));
  shim.kill("SIGTERM");
  await exited;
  const records = readFileSync(logFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(records.find((r) => r.kind === "request" && r.tool === "delete_everything")).toMatchObject({ id: 2, decision: { action: "deny", enforced: false } });
}, 20_000);
