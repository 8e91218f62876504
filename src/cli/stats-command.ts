import { selectCalls } from "../analysis/select.js";
import { loadLogs } from "../analysis/read-logs.js";
import { computeStats, type GroupBy } from "../analysis/stats.js";
import { statsTable } from "../analysis/stats-table.js";
import type { RecordFilters } from "../saved-logs/filters.js";
import { FileReadError } from "../saved-logs/follow.js";
import { UsageError } from "../util/usage-error.js";

export interface StatsOptions extends RecordFilters {
  by?: GroupBy;
  json?: boolean;
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
    const report = computeStats(selectCalls(logs.records, o), o.by ?? "tool");
    io.stdout.write(o.json ? `${JSON.stringify(report, null, 2)}\n` : statsTable(report));
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
