/**
 * `mcp-wiretap mock LOG…`: serves a capture as an MCP server, over stdio or Streamable HTTP on loopback,
 * so a client can run against a recorded server without the real one.
 */
import { loadLogs } from "../analysis/read-logs.js";
import { UsageError } from "../util/usage-error.js";
import { MATCH_MODES, type MatchMode } from "./matcher.js";
import { MockServer } from "./mock-server.js";
import { readRecording } from "./recording.js";
import { serveHttp } from "./http-serve.js";
import { serveStdio } from "./stdio-serve.js";

export interface MockOptions {
  stdio?: boolean;
  port?: number;
  /** Legacy HTTP+SSE (2024-11-05) instead of Streamable HTTP. */
  legacy?: boolean;
  match: MatchMode;
  server?: string;
  speed: number;
}

export interface MockIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function mockCommand(logs: string[], o: MockOptions, io: MockIo): Promise<number> {
  if (o.stdio && (o.port !== undefined || o.legacy)) throw new UsageError("mock serves over --stdio or HTTP (--port, --legacy), not both");
  if (!(MATCH_MODES as readonly string[]).includes(o.match)) throw new UsageError(`--match must be one of ${MATCH_MODES.join(", ")}`);
  if (logs.includes("-") && o.stdio) throw new UsageError("with --stdio, stdin is the client's: give the log as a file");
  const { records } = await loadLogs(logs, io.stdin);
  const recording = readRecording(records, o.server);
  const server = new MockServer(recording, o.match, o.speed);
  const summary = `${recording.name}: ${recording.lists.size} list results, ${recording.calls.length} calls, --match ${o.match}`;
  if (o.stdio) {
    io.stderr.write(`mcp-wiretap mock: serving ${summary} on stdio\n`);
    await serveStdio(server, io.stdin, io.stdout);
    // Pipes are asynchronous: the last answers leave before the process does.
    await new Promise<void>((resolve) => io.stdout.write("", () => resolve()));
    return 0;
  }
  const serving = await serveHttp(server, o.port ?? 0, { legacy: o.legacy === true });
  io.stderr.write(`mcp-wiretap mock: serving ${summary} at ${serving.url}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await serving.close();
  return 0;
}
