import { type Command, InvalidArgumentError, Option } from "commander";
import { buildCalls } from "../analysis/calls.js";
import { diffText } from "../analysis/diff-report.js";
import { loadLogs } from "../analysis/read-logs.js";
import { diffRuns } from "../analysis/run-diff.js";
import { defaultIo, type AnalysisIo } from "./stats-command.js";
import { FileReadError } from "./tail/follow.js";

export interface DiffCommandOptions {
  exitCode?: boolean;
  latencyRatio?: number;
  latencyMin?: number;
  json?: boolean;
}

export function registerDiffCommand(program: Command): void {
  program
    .command("diff")
    .argument("<a>", "the earlier run: a log file or a folder of them")
    .argument("<b>", "the later run: a log file or a folder of them")
    .description("what changed between two recorded runs: tools added, removed or redefined; call outcomes; latency")
    .option("--exit-code", "exit 1 when B regressed (a tool removed or redefined, a worse outcome, slower), 0 otherwise")
    .addOption(new Option("--latency-ratio <r>", "a median this many times slower or faster is a shift").argParser(parseRatio).default(2))
    .addOption(new Option("--latency-min <ms>", "…and moved by at least this many ms").argParser(parseMs).default(100))
    .option("--json", "as JSON (see docs/analysis.md)")
    .action(async (a: string, b: string, o: DiffCommandOptions) => {
      process.exitCode = await diffCommand(a, b, o);
    });
}

/** `mcp-wiretap diff A B`: 0, or with --exit-code 1 on a regression; 2 when an input cannot be read. */
export async function diffCommand(a: string, b: string, o: DiffCommandOptions, io: AnalysisIo = defaultIo()): Promise<number> {
  let runs;
  try {
    runs = await Promise.all([a, b].map(async (input) => {
      if (input === "-") throw new FileReadError("diff reads files or folders, not stdin");
      const logs = await loadLogs([input], io.stdin);
      return { records: logs.records, calls: buildCalls(logs.records) };
    }));
  } catch (err) {
    if (err instanceof FileReadError || (err as Error).name === "UsageError") {
      io.stderr.write(`mcp-wiretap: ${(err as Error).message}\n`);
      return 2;
    }
    throw err;
  }
  const d = diffRuns(runs[0]!, runs[1]!, { latencyRatio: o.latencyRatio ?? 2, latencyMinMs: o.latencyMin ?? 100 });
  io.stdout.write(o.json ? `${JSON.stringify(d, null, 2)}\n` : diffText(d));
  return o.exitCode && d.regressions > 0 ? 1 : 0;
}

function parseRatio(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 1)) throw new InvalidArgumentError("must be a number above 1 (2 = twice as slow).");
  return n;
}

function parseMs(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError("must be a whole number of milliseconds.");
  return Number(value);
}
