import { PassThrough } from "node:stream";
import { loadLogs } from "../analysis/read-logs.js";
import { findBySelector } from "../replay/selection.js";
import { applyEdits, parseSet } from "../replay/edits.js";
import { replaySideEffects } from "../replay/side-effects.js";
import { UsageError } from "../util/usage-error.js";
import { ToolInputError } from "./bounded.js";
import { getExchange } from "./exchange.js";
import type { RecordIndex } from "./record-index.js";

/** What `--allow-replay` hands on to `mcp-wiretap replay` (the rest is as the command's defaults). */
export interface ReplaySettings {
  caDir: string;
  config?: string;
  upstreamCa: string[];
  timeoutMs: number;
}

export interface ReplayInput {
  selector: string;
  set?: string[];
  confirm?: boolean;
}

export interface ReplayResult {
  selector: string;
  answered: boolean;
  /** The replay's exit code: 0 a result, 1 an error or no answer. */
  exitCode: number;
  answer: unknown;
  /** What the replay said on the way (other messages from the server, notes). */
  notes: string[];
  /** The log the replay's records were appended to (they carry `replayOf`). */
  log: string;
}

/**
 * `replay_call`: `mcp-wiretap replay` of one captured request, with the command's guards: a tool call the
 * capture does not mark read-only needs `confirm: true` (the command's `--yes`); a stdio capture is never
 * replayed from here (it would run a command); the records go to the log the call came from.
 */
export async function replayCall(index: RecordIndex, input: ReplayInput, settings: ReplaySettings): Promise<ReplayResult> {
  const exchange = await getExchange(index, { selector: input.selector, maxRecordBytes: 0 });
  const file = exchange.records[0]?.file;
  if (file === undefined || exchange.selector === null) throw new ToolInputError(`${input.selector}: not a request of the served logs`);
  if (exchange.transport === "stdio") throw new ToolInputError(`${exchange.selector} went over stdio: replaying it runs a server command, which this server never does; run \`mcp-wiretap replay ${file} --call ${exchange.selector} --stdio -- <command>\` yourself`);
  const { records } = await loadLogs([file], emptyStdin());
  const call = findBySelector(records, exchange.selector);
  // Judged on the params sent: a `set` may name another tool than the captured call did.
  let params = call.params;
  try {
    if (input.set !== undefined && input.set.length > 0) params = applyEdits(params ?? {}, input.set.map(parseSet));
  } catch (err) {
    if (err instanceof UsageError) throw new ToolInputError(err.message);
    throw err;
  }
  const guard = replaySideEffects(call, params);
  if (guard.question !== null && input.confirm !== true) {
    throw new ToolInputError(`refused: ${guard.reason}; replaying runs it again on the server: call replay_call again with confirm: true to replay it anyway`);
  }
  const stdout = collector();
  const stderr = collector();
  const { replayCommand } = await import("../replay/replay.js");
  let code: number;
  try {
    code = await replayCommand(file, [], { call: exchange.selector, set: input.set ?? [], yes: true, caDir: settings.caDir, upstreamCa: settings.upstreamCa, insecureUpstream: false, timeoutMs: settings.timeoutMs, ...(settings.config ? { config: settings.config } : {}) }, { stdout: stdout.stream, stderr: stderr.stream, stdin: emptyStdin() });
  } catch (err) {
    if (err instanceof UsageError) throw new ToolInputError(err.message);
    throw err;
  }
  const printed = stdout.text();
  const end = printed.indexOf("\n}\n");
  let answer: unknown = null;
  try {
    answer = JSON.parse(end >= 0 ? printed.slice(0, end + 2) : printed);
  } catch {
    answer = null;
  }
  return { selector: exchange.selector, answered: answer !== null, exitCode: code, answer, notes: stderr.text().split("\n").filter(Boolean).slice(0, 50), log: file };
}

function emptyStdin(): PassThrough {
  const s = new PassThrough();
  s.end();
  return s;
}

function collector(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on("data", (c: Buffer) => {
    // Bounded: an answer larger than this is cut (the log has it whole).
    if (size < 1_000_000) chunks.push(c);
    size += c.length;
  });
  return { stream, text: () => Buffer.concat(chunks).toString("utf8") };
}
