import { writeFileAtomic } from "../../util/private-file.js";
import type { Command } from "commander";
import { VERSION } from "../package-info.js";
import { addFilterOptions, parseRecord } from "../tail/command.js";
import { compileFilters, type LogRecord, type RecordFilters } from "../tail/filters.js";
import { FileReadError, inputLines, isStdin } from "../tail/follow.js";
import { buildHar } from "./har.js";
import { inputFile, stdioLogsOption } from "../stdio-logs.js";

export interface ExportOptions extends RecordFilters {
  /** Where the HAR goes ("-": stdout). */
  har: string;
}

export function registerExportCommand(program: Command): void {
  const command = program
    .command("export")
    .argument("[file]", "NDJSON log written by `start` (- or absent: stdin)")
    .description("convert a log to HAR 1.2 (browser dev tools, HTTP Toolkit): one entry per exchange, bodies rebuilt from the MCP messages")
    .requiredOption("--har <out>", "the HAR file to write (- for stdout)")
    .addOption(stdioLogsOption());
  addFilterOptions(command).action(async (file: string | undefined, o: ExportOptions & { stdioLogs?: boolean }) => {
    process.exitCode = await exportCommand(inputFile(file, o), o);
  });
}

/** `mcp-wiretap export --har OUT [FILE]`: resolves with the exit code. */
export async function exportCommand(
  file: string | undefined,
  o: ExportOptions,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; stdin: NodeJS.ReadableStream } = process,
): Promise<number> {
  const records: LogRecord[] = [];
  let skipped = 0;
  try {
    for await (const line of inputLines(file, io.stdin)) {
      if (line.trim() === "") continue;
      const record = parseRecord(line);
      if (record) records.push(record);
      else skipped++;
    }
  } catch (err) {
    if (err instanceof FileReadError) {
      io.stderr.write(`mcp-wiretap: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const har = buildHar(records, {
    creator: { name: "mcp-wiretap", version: VERSION },
    filter: compileFilters(o),
    comment: `Exported by mcp-wiretap from ${isStdin(file) ? "stdin" : file}. Bodies are rebuilt from the logged MCP messages; headers were redacted when logged.`,
  });
  const text = JSON.stringify(har, null, 2) + "\n";
  if (o.har === "-") {
    io.stdout.write(text);
  } else {
    try {
      // A new 0600 file renamed into place: a link at the path is replaced, never written through, and an
      // older export that others could read is not reused with its mode.
      await writeFileAtomic(o.har, text);
    } catch (err) {
      io.stderr.write(`mcp-wiretap: cannot write ${o.har}: ${(err as Error).message}\n`);
      return 1;
    }
    io.stderr.write(`mcp-wiretap: wrote ${har.log.entries.length} entries to ${o.har}${skipped > 0 ? ` (${skipped} line(s) that are not JSON records skipped)` : ""}\n`);
  }
  return 0;
}
