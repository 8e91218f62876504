import { selectCalls } from "../analysis/select.js";
import { loadLogs } from "../analysis/read-logs.js";
import { computeStats, type GroupBy } from "../analysis/stats.js";
import { statsTable } from "../analysis/stats-table.js";
import type { RecordFilters } from "../saved-logs/filters.js";
import { FileReadError } from "../saved-logs/follow.js";
import { UsageError } from "../util/usage-error.js";
import type { TokenReport } from "../tokens/token-costs.js";

export interface StatsOptions extends RecordFilters {
  by?: GroupBy;
  json?: boolean;
  /** Add token estimates (the tokenizer is loaded only then). */
  tokens?: boolean;
}

export interface AnalysisIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
}

/** `mcp-wiretap stats`: resolves with the exit code (0, or 1 when an input cannot be read). */
export async function statsCommand(files: string[], o: StatsOptions, io: AnalysisIo = defaultIo()): Promise<number> {
  try {
    const logs = await loadLogs(files, io.stdin, { onNote: noteTo(io.stderr) });
    const calls = selectCalls(logs.records, o);
    const report = computeStats(calls, o.by ?? "tool");
    let tokens: TokenReport | undefined;
    if (o.tokens) {
      const [{ loadTokenCounter }, { tokenCosts }] = await Promise.all([import("../tokens/token-counter.js"), import("../tokens/token-costs.js")]);
      tokens = tokenCosts(logs.records, calls, await loadTokenCounter());
    }
    if (o.json) io.stdout.write(`${JSON.stringify(tokens ? { ...report, tokens } : report, null, 2)}\n`);
    else io.stdout.write(statsTable(report) + (tokens ? `\n${(await import("../tokens/token-costs.js")).tokenText(tokens)}` : ""));
    return 0;
  } catch (err) {
    if (err instanceof FileReadError || err instanceof UsageError) {
      io.stderr.write(`mcp-wiretap: ${err.message}\n`);
      return err instanceof UsageError ? 2 : 1;
    }
    throw err;
  }
}

/** A reader's notes (links skipped, folders others can write to) on stderr. */
export function noteTo(stderr: NodeJS.WritableStream): (message: string) => void {
  return (message) => void stderr.write(`mcp-wiretap: ${message}\n`);
}

export function defaultIo(): AnalysisIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
}
