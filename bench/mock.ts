/**
 * `mcp-wiretap mock --stdio` answering a recorded echo call, beside the bench's stdio echo server answering
 * the same request: round trips one at a time (request written → answer read), same client, taking turns.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { REPO } from "./paths.ts";
import { summarize, type Summary } from "./stats.ts";
import { sleep } from "./time.ts";
import { onAnswerIds } from "./stdio.ts";

const MAIN = path.join(REPO, "dist", "cli", "main.js");
const ECHO = path.join(REPO, "bench", "stdio-echo-server.ts");

export interface MockResult {
  messages: number;
  direct: Summary;
  mock: Summary;
}

/** A capture of one server: its initialize and one echo call, as `mcp-wiretap stdio` records them. */
function writeCapture(file: string): void {
  const base = { level: "info", time: new Date().toISOString(), event: "rpc", flow: "bench-flow", transport: "stdio", server: "stdio:bench", path: "", session: "bench-session", protocolVersion: "2025-11-25", bytes: 100 };
  const lines = [
    { ...base, direction: "client_to_server", kind: "request", id: 0, method: "initialize", tool: null, params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "1" } } },
    { ...base, direction: "server_to_client", kind: "response", id: 0, method: "initialize", tool: null, latencyMs: 1, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "bench", version: "1" } } },
    { ...base, direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool: "echo", params: { name: "echo", arguments: { message: "bench" } } },
    { ...base, direction: "server_to_client", kind: "response", id: 1, method: "tools/call", tool: "echo", latencyMs: 1, result: { content: [{ type: "text", text: "Echo: bench" }] } },
  ];
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n", { mode: 0o600 });
}

interface Peer {
  roundTrip(id: number): Promise<number>;
  close(): Promise<void>;
}

function launch(args: string[]): Peer {
  const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] });
  let waiting: { id: number; resolve(): void } | null = null;
  onAnswerIds(child.stdout, (id) => {
    if (waiting?.id === id) waiting.resolve();
  });
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  return {
    roundTrip: (id) =>
      new Promise((resolve) => {
        const t0 = performance.now();
        waiting = { id, resolve: () => resolve(performance.now() - t0) };
        child.stdin.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"bench"}}}\n`);
      }),
    close: async () => {
      child.stdin.end();
      await Promise.race([exited, sleep(10_000)]);
      child.kill("SIGKILL");
    },
  };
}

export async function runMock(tmp: string, opts: { messages: number; rounds: number }): Promise<MockResult> {
  const capture = path.join(tmp, "mock-capture.ndjson");
  writeCapture(capture);
  const direct = launch([ECHO]);
  const mock = launch([MAIN, "mock", capture, "--stdio"]);
  const d: number[] = [];
  const m: number[] = [];
  let id = 10;
  for (let i = 0; i < 200; i++) {
    await direct.roundTrip(id++);
    await mock.roundTrip(id++);
  }
  const per = Math.ceil(opts.messages / opts.rounds);
  for (let r = 0; r < opts.rounds; r++) {
    for (let i = 0; i < per; i++) d.push(await direct.roundTrip(id++));
    for (let i = 0; i < per; i++) m.push(await mock.roundTrip(id++));
  }
  await direct.close();
  await mock.close();
  return { messages: d.length, direct: summarize(d), mock: summarize(m) };
}
