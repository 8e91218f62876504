/**
 * A server that writes requests the shim must refuse (each answered by the shim with -32052 on the server's
 * stdin) and never reads its stdin. The shim read the server's stdout with back-pressure from the client only,
 * so its replies queued without bound in memory, as fast as the server could write. The shim must stop
 * reading a peer while the answers it owes that peer cannot be delivered.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { assertBuilt, CLI_MAIN, NODE_BIN, REPO_ROOT } from "../../helpers/proxy-harness.js";
import { tempDir } from "../../helpers/stdio-shim.js";

const dir = tempDir();
// Writes 200 000 refused requests (NaN in their params: unreadable to the shim), never reads its stdin.
const SERVER = `
let i = 0;
const write = () => {
  let ok = true;
  while (i < 200000 && ok) ok = process.stdout.write('{"jsonrpc":"2.0","id":' + i++ + ',"method":"ping","params":{"x":NaN}}\\n');
  if (i < 200000) process.stdout.once("drain", write); else process.stderr.write("server wrote everything\\n");
};
write();
setInterval(() => {}, 1000);
`;

let kill: (() => void) | undefined;
afterEach(() => kill?.());

it("a server that never reads its stdin cannot make the shim queue its refusals without bound: the shim stops reading it", async () => {
  assertBuilt();
  const logFile = path.join(dir, "flood.ndjson");
  const shim = spawn(NODE_BIN, [CLI_MAIN, "stdio", "--mode", "enforce", "--payloads", "none", "--max-inspect-bytes", "65536", "--log-file", logFile, "--", NODE_BIN, "-e", SERVER], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  kill = () => shim.kill("SIGKILL");
  let stderr = "";
  shim.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  shim.stdout.resume();
  const refused = (): number => readFileSync(logFile, "utf8").split("\n").filter((l) => l.includes('"unreadable"')).length;
  await new Promise((r) => setTimeout(r, 4000));
  const early = refused();
  await new Promise((r) => setTimeout(r, 2000));
  // Replies of about 230 bytes each: what waits for the server (--max-inspect-bytes 64 KiB: some 1.1 MiB, the
  // pipe's 64 KiB) holds some thousands of them; then the shim reads no more, and no more are refused.
  expect(early).toBeGreaterThan(0);
  expect(refused()).toBe(early);
  expect(early).toBeLessThan(10_000);
  expect(stderr).not.toContain("server wrote everything");
}, 20_000);
