import { type Command, InvalidArgumentError, Option } from "commander";
import { collect } from "../option-parsers.js";
import { useColor } from "../../saved-logs/color.js";
import { compileFilters, DECISIONS, hasFilters, splitList, type DecisionAction, type LogRecord, type RecordFilters } from "../../saved-logs/filters.js";
import { DEFAULT_POLL_MS, FileReadError, inputLines, isStdin } from "../../saved-logs/follow.js";
import { TailFormatter } from "./formatter.js";
import { parseRecord } from "../../saved-logs/parse-record.js";
import { escapeLine } from "../../log/escape-line.js";
import { inputFile, stdioLogsOption } from "../stdio-logs.js";

export interface TailOptions extends RecordFilters {
  follow?: boolean;
  json?: boolean;
  /** Show every http record (the view otherwise keeps only failed and non-MCP exchanges). */
  allHttp?: boolean;
  /** Of what FILE holds already, only the last N records shown (then, with --follow, everything new). */
  lines?: number;
  pollMs?: number;
  /** Each message's arguments, result or error on an indented line under it. */
  verbose?: boolean;
}

export interface TailIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** The filter options `tail` and `export` share. */
export function addFilterOptions(command: Command): Command {
  return command
    .option("--server <glob>", "only this destination (host or host:port glob); repeatable or comma-separated", collect)
    .option("--session <prefix>", "only sessions whose id starts with this; repeatable or comma-separated", collect)
    .option("--method <glob>", "only this JSON-RPC method (progress/cancel count for their request's); repeatable or comma-separated", collect)
    .option("--tool <glob>", "only this tool; repeatable or comma-separated", collect)
    .option("--decision <action>", `only this policy decision (${DECISIONS.join("|")}); repeatable or comma-separated`, collectDecisions);
}

function collectDecisions(value: string, previous: DecisionAction[] = []): DecisionAction[] {
  const values = splitList([value]).map((v) => v.toLowerCase());
  for (const v of values) {
    if (!(DECISIONS as readonly string[]).includes(v)) throw new InvalidArgumentError(`must be one of ${DECISIONS.join(", ")} (comma-separated for several).`);
  }
  return [...previous, ...(values as DecisionAction[])];
}

function parseCount(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError("must be a whole number.");
  return Number(value);
}

/** What the marks of a line mean (README.md shows the same legend). */
const LEGEND = [
  "",
  "A line: time, session, direction, kind, #id, latency, size, method and tool, then marks.",
  "  →              client to server",
  "  ←              server to client (├ └: progress and the response, under their request)",
  "  ──             a session or the proxy starts or ends",
  "  ✗              the proxy refused a connection or an exchange",
  "  ⋯ 1/3          progress: done/total",
  "  FLAG rule      the policy flagged the message; it was forwarded",
  "  DENY rule      the policy denies it, logged only (monitor mode): it was forwarded",
  "  DENY* rule     denied and enforced (enforce mode): blocked; what was done follows in ( )",
  "  UNANSWERED     a request that will never get its response; the reason follows",
  "  ⚠ header mismatch   stateless-revision headers (Mcp-Method, Mcp-Name) disagree with the body or are missing",
  "  ↻ replay       sent by `mcp-wiretap replay` (records with replayOf)",
  "With -v, `call <flow>#<id>` under a client's request is what `mcp-wiretap replay --call` takes.",
].join("\n");

export function registerTailCommand(program: Command): void {
  const tail = program
    .command("tail")
    .argument("[file]", "NDJSON log written by `start` (- or absent: stdin)")
    .description("show a log one MCP message per line (times in UTC), or filter it with --json")
    .option("-f, --follow", "keep reading as the file grows; survives rotation and truncation (like tail -F)")
    .option("--json", "print the matching records unchanged, as NDJSON")
    .option("--all-http", "show every http record (by default only failed exchanges and non-MCP traffic)")
    .option("-v, --verbose", "show each message's arguments, result or error on an indented line under it (cut short)")
    .addOption(new Option("-n, --lines <n>", "of what the file holds already, show only the last n matching records").argParser(parseCount))
    .addOption(stdioLogsOption())
    .addHelpText("after", LEGEND);
  addFilterOptions(tail).action(async (file: string | undefined, o: TailOptions & { stdioLogs?: boolean }) => {
    process.exitCode = await tailCommand(inputFile(file, o), o);
  });
}

/**
 * `mcp-wiretap tail [FILE]`: resolves with the exit code (0, or 1 when FILE cannot be read) once the input
 * ends; with --follow on a file, runs until `io.signal` aborts (or the process is stopped).
 */
export async function tailCommand(file: string | undefined, o: TailOptions, io: TailIo = defaultIo()): Promise<number> {
  const matches = compileFilters(o);
  const formatter = new TailFormatter({ color: !o.json && useColor(io.env, io.stdout.isTTY === true), allHttp: o.allHttp ?? false, verbose: o.verbose ?? false });
  let broken = false;
  const onError = (err: NodeJS.ErrnoException): void => {
    // `tail log | head`: the reader went away.
    if (err.code === "EPIPE") broken = true;
  };
  io.stdout.on("error", onError);

  // -n: output is held in a ring until the file's existing content has been read.
  const keep = o.lines;
  let ring: string[] | null = keep !== undefined && file !== undefined && file !== "-" ? [] : null;
  const write = (text: string): void => {
    if (ring !== null) {
      ring.push(text);
      if (ring.length > keep!) ring.shift();
      return;
    }
    io.stdout.write(text + "\n");
  };
  const release = (): void => {
    if (ring === null) return;
    const held = ring;
    ring = null;
    if (held.length > 0) io.stdout.write(held.join("\n") + "\n");
  };

  let matched = 0;
  const show = (line: string): void => {
    const record = parseRecord(line);
    if (record === null) {
      if (!o.json) write(formatter.formatRaw(line));
      return;
    }
    formatter.observe(record);
    if (!matches(record)) return;
    matched++;
    if (o.json) {
      // Same record, with any raw control or bidi character written as a JSON escape (older logs have them).
      write(escapeLine(line));
      return;
    }
    const text = formatter.format(record);
    if (text !== null) write(text);
  };

  // Until the first log record, other lines are held back: if none comes, the input is not a log (a
  // policy file given by mistake), which is said instead of echoing it. Past MAX_HELD they are only counted.
  const input = { records: 0, skipped: 0, held: [] as string[] };
  const handle = (line: string): void => {
    if (line.trim() === "") return;
    if (input.records > 0) return show(line);
    if (!isLogRecord(parseRecord(line))) {
      input.skipped++;
      if (input.held.length < MAX_HELD) input.held.push(line);
      return;
    }
    input.records++;
    for (const held of input.held) show(held);
    input.held = [];
    show(line);
  };
  const notALog = (): boolean => input.records === 0 && input.skipped > 0;

  const stop = new AbortController();
  io.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  const source = inputLines(file, io.stdin, {
    follow: o.follow ?? false,
    pollMs: o.pollMs ?? DEFAULT_POLL_MS,
    signal: io.signal?.aborted ? AbortSignal.abort() : stop.signal,
    onNotice: (message) => io.stderr.write(`mcp-wiretap tail: ${message}\n`),
    onCaughtUp: () => {
      // Following a file that holds no record at all: waiting for more of it would not help.
      if (notALog()) stop.abort();
      else release();
    },
  });
  try {
    for await (const line of source) {
      handle(line);
      if (broken || stop.signal.aborted) break;
    }
    if (notALog()) {
      const lines = input.skipped === 1 ? "1 line" : `${input.skipped} lines`;
      io.stderr.write(
        `mcp-wiretap tail: ${isStdin(file) ? "the input" : file} is not an mcp-wiretap log: skipped ${lines}, none of them a log record ` +
          `(one JSON object per line with an "event"; \`mcp-wiretap start --log-file FILE\` writes them)\n`,
      );
      return 1;
    }
    release();
    if (matched === 0 && input.records > 0 && hasFilters(o) && !o.follow) {
      io.stderr.write(`mcp-wiretap tail: no record of ${input.records} matched the filters\n`);
    }
  } catch (err) {
    if (err instanceof FileReadError) {
      io.stderr.write(`mcp-wiretap: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    io.stdout.off("error", onError);
  }
  return 0;
}

/** Lines held back while no log record has been seen (see `handle`). */
const MAX_HELD = 1000;

/** What mcp-wiretap writes: a JSON object with a string `event` (pino's other objects are not ours). */
function isLogRecord(record: LogRecord | null): boolean {
  return record !== null && typeof record.event === "string";
}


function defaultIo(): TailIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
}
