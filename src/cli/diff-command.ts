import { buildCalls } from "../analysis/calls.js";
import { diffText } from "../analysis/diff-report.js";
import { loadLogs } from "../analysis/read-logs.js";
import { diffRuns } from "../analysis/run-diff.js";
import { defaultIo, noteTo, type AnalysisIo } from "./stats-command.js";
import { FileReadError } from "../saved-logs/follow.js";

export interface DiffCommandOptions {
  exitCode?: boolean;
  latencyRatio?: number;
  latencyMin?: number;
  json?: boolean;
}

/** `mcp-wiretap diff A B`: 0, or with --exit-code 1 on a regression; 2 when an input cannot be read. */
export async function diffCommand(a: string, b: string, o: DiffCommandOptions, io: AnalysisIo = defaultIo()): Promise<number> {
  let runs;
  try {
    runs = await Promise.all([a, b].map(async (input) => {
      if (input === "-") throw new FileReadError("diff reads files or folders, not stdin");
      const logs = await loadLogs([input], io.stdin, { onNote: noteTo(io.stderr) });
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
