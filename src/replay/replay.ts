/**
 * `mcp-wiretap replay LOG --call SELECTOR`: re-sends one captured request to its server in a fresh MCP
 * session, through the same pipeline as live traffic, and prints the answer. Exit 0 answered with a
 * result, 1 answered with an error or not answered, 2 bad usage or refused.
 */
import { escapeLine, visibleText } from "../log/escape-line.js";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { loadLogs } from "../analysis/read-logs.js";
import { UsageError } from "../util/usage-error.js";
import { ReplayError, type Message } from "./channel.js";
import { curlCommands, shellQuote } from "./curl.js";
import { applyEdits, parseParams, parseSet } from "./edits.js";
import { replayOverHttp, type ReplayProxyOptions } from "./http-replay.js";
import { answerDiff } from "./answer-diff.js";
import { findBySelector, findLast, type CapturedCall } from "./selection.js";
import { sessionPlan, targetUrl } from "./replay-call.js";
import { confirmSideEffects, replaySideEffects } from "./side-effects.js";
import { replayOverStdio } from "./stdio-replay.js";
import { parseHeaders, replayLogTarget } from "./replay-inputs.js";

export interface ReplayOptions extends Omit<ReplayProxyOptions, "logFile"> {
  call?: string;
  last?: string;
  set?: string[];
  params?: string;
  server?: string;
  diff?: boolean;
  header?: string[];
  yes?: boolean;
  printCurl?: boolean;
  /** `--stdio -- CMD`: the command comes as the arguments after LOG. */
  stdio?: boolean;
  /** `--input FILE`: inputResponses for a second round when the first asks for input. */
  input?: string;
  logFile?: string;
  timeoutMs: number;
}

export interface ReplayIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export async function replayCommand(log: string, command: string[], o: ReplayOptions, io: ReplayIo): Promise<number> {
  if ((o.call === undefined) === (o.last === undefined)) throw new UsageError("replay needs one of --call <flow>#<id> (as `tail -v` shows it) or --last <filter> (e.g. --last tool:echo)");
  if (command.length > 0 && !o.stdio) throw new UsageError(`unexpected arguments after LOG (${command.join(" ")}): a stdio server's command goes after --stdio --`);
  const { records } = await loadLogs([log], io.stdin);
  const call = o.call !== undefined ? findBySelector(records, o.call) : findLast(records, o.last!);
  const params = await replayParams(call, o, io.stdin);
  const input = o.input !== undefined ? parseParams(o.input === "-" ? await readAll(io.stdin) : readFile(o.input, "--input"), o.input, "--input") : undefined;
  const plan = sessionPlan(call, params, input);
  const headers = parseHeaders(o.header ?? []);
  const stdioCommand = o.stdio ? command : null;
  if (o.stdio && command.length === 0) throw new UsageError("--stdio needs the server's command after --: replay LOG --call … --stdio -- <command> [args…]");
  if ((stdioCommand || call.transport === "stdio") && Object.keys(headers).length > 0) throw new UsageError("--header is for HTTP servers: a stdio server gets no headers");
  if (call.transport === "stdio" && o.server) throw new UsageError("--server is for HTTP captures; a stdio server is given with --stdio -- <command>");
  const url = call.transport === "stdio" ? null : targetUrl(call, o.server);
  if (o.printCurl) {
    const shownCommand = stdioCommand ?? call.stdioCommand;
    io.stdout.write(curlCommands({ transport: stdioCommand ? "stdio" : call.transport, url: url?.href ?? null, command: shownCommand, headerNames: Object.keys(headers) }, plan));
    return 0;
  }
  await confirmSideEffects(replaySideEffects(call, params), o.yes === true, io);
  const proxyOptions: ReplayProxyOptions = { ...o, logFile: replayLogTarget(log, records, o.logFile) };
  const where = stdioCommand ? stdioCommand.map(shellQuote).join(" ") : url ? url.href : "";
  io.stderr.write(`mcp-wiretap replay: ${call.selector} ${call.method}${call.tool ? ` ${call.tool}` : ""} → ${where || "(stdio)"}; records: ${proxyOptions.logFile}\n`);
  let result;
  try {
    if (stdioCommand || call.transport === "stdio") {
      const cmd = stdioCommand ?? (await confirmRecordedCommand(call, io));
      result = await replayOverStdio({ command: cmd, server: call.transport === "stdio" ? call.server : `stdio:${cmd[0]}`, replayOf: call.selector, timeoutMs: o.timeoutMs }, plan, proxyOptions);
    } else {
      result = await replayOverHttp({ transport: call.transport as "streamable-http" | "http+sse", url: url!, headers, replayOf: call.selector, timeoutMs: o.timeoutMs }, plan, proxyOptions);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // Not answered: the exchange failed (refused, timed out, cut); said in one line, no stack.
    const message = err instanceof ReplayError ? err.message : `${(err as Error).name}: ${(err as Error).message}`;
    io.stderr.write(`mcp-wiretap replay: ${visibleText(message)}\n`);
    return 1;
  }
  if (result.firstRound) io.stderr.write(`  round 1 asked for input, answered from --input: ${escapeLine(JSON.stringify(result.firstRound.message.result))}\n`);
  for (const m of result.answer.others) io.stderr.write(`  ← ${typeof m.method === "string" ? visibleText(m.method) : "message"} ${escapeLine(JSON.stringify(m.params ?? m.result ?? m.error ?? {}))}\n`);
  const answer = result.answer.message;
  if ((answer.result as Message | undefined)?.resultType === "input_required") {
    io.stderr.write("mcp-wiretap replay: the server asks for input (inputRequests below): answer with --input FILE (a JSON object: the inputResponses)\n");
  }
  io.stdout.write(`${answerText(answer)}\n`);
  if (o.diff) io.stdout.write(answerDiff(call.answer, answer));
  return Object.hasOwn(answer, "error") ? 1 : 0;
}

async function replayParams(call: CapturedCall, o: ReplayOptions, stdin: NodeJS.ReadableStream): Promise<Record<string, unknown> | undefined> {
  let params = call.params;
  if (o.params !== undefined) {
    const text = o.params === "-" ? await readAll(stdin) : readFile(o.params, "--params");
    params = parseParams(text, o.params, "--params");
  } else if (call.paramsProblem !== null) {
    throw new UsageError(`${call.selector}: ${call.paramsProblem}: give the params with --params FILE (or - for stdin)`);
  }
  const edits = (o.set ?? []).map(parseSet);
  if (edits.length === 0) return params;
  return applyEdits(params ?? {}, edits);
}

function readFile(file: string, option: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`${option} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** A stdio capture replays the command its launch recorded only once the user, at a terminal, agrees. */
async function confirmRecordedCommand(call: CapturedCall, io: ReplayIo): Promise<string[]> {
  const recorded = call.stdioCommand;
  const shown = recorded ? recorded.map(shellQuote).join(" ") : null;
  if (!recorded || recorded.length === 0) throw new UsageError(`${call.selector} went over stdio and the log does not record the command: pass --stdio -- <command> [args…]`);
  if (!io.stdin.isTTY || !io.stderr.isTTY) throw new UsageError(`${call.selector} went over stdio: pass the server's command, e.g. --stdio -- ${shown} (the recorded one, credentials masked)`);
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await rl.question(`Run the recorded server command?\n  ${shown}\n[y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError(`not replayed (or pass --stdio -- <command>)`);
  } finally {
    rl.close();
  }
  return recorded;
}

/** The server's answer as printed: pretty JSON whose control, bidi and invisible characters are `\\uXXXX`. */
export function answerText(message: Message): string {
  return escapeLine(JSON.stringify(message, null, 2));
}
