import { writeOutputFile } from "../../util/output-file.js";
import type { Command } from "commander";
import { VERSION } from "../../util/package-info.js";
import { addFilterOptions } from "../tail/command.js";
import { parseRecord } from "../../saved-logs/parse-record.js";
import { compileFilters, hasFilters, type LogRecord, type RecordFilters } from "../../saved-logs/filters.js";
import { FileReadError, inputLines, isStdin } from "../../saved-logs/follow.js";
import { inputFile, stdioLogsOption } from "../stdio-logs.js";
import { UsageError } from "../../util/usage-error.js";

export interface ExportOptions extends RecordFilters {
  /** Where the HAR goes ("-": stdout). */
  har?: string;
  /** Where the self-contained HTML page goes (see ui/server/html-export.ts). */
  html?: string;
}

export function registerExportCommand(program: Command): void {
  const command = program
    .command("export")
    .argument("[files...]", "NDJSON logs written by `start` (- or absent: stdin)")
    .description("convert a log to HAR 1.2 (browser dev tools, HTTP Toolkit): one entry per exchange, bodies rebuilt from the MCP messages; to one self-contained HTML page of the web UI; or to OTLP/JSON spans and metrics for an OpenTelemetry Collector")
    .option("--har <out>", "the HAR file to write (- for stdout)")
    .option("--html <out>", "write the web UI with the records embedded, one file that opens offline (- for stdout)")
    .option("--otlp <out>", "write OTLP/JSON lines (spans and metrics, as the live export sends them); never overwritten (- for stdout)")
    .option("--otlp-payloads", "with --otlp: put the logged (redacted) tool arguments and results on spans", false)
    .addOption(stdioLogsOption());
  addFilterOptions(command).action(async (given: string[], o: ExportOptions & { stdioLogs?: boolean; otlp?: string; otlpPayloads?: boolean }) => {
    const files = o.stdioLogs ? [inputFile(given[0], o)!] : given;
    if (o.stdioLogs && given.length > 1) throw new UsageError("give either FILE or --stdio-logs, not both");
    if (o.otlp !== undefined) {
      if (o.har !== undefined || o.html !== undefined) throw new UsageError("--otlp is an export of its own: give it without --har and --html");
      process.exitCode = await (await import("../../otel/offline-export.js")).exportOtlpCommand(files, { otlp: o.otlp, otlpPayloads: o.otlpPayloads ?? false, filter: compileFilters(o) }, VERSION);
      return;
    }
    if (o.html !== undefined) {
      process.exitCode = await (await import("../../ui/server/html-export.js")).exportHtml(files, o.html, o, process);
      if (o.har === undefined || process.exitCode !== 0) return;
    }
    if (o.har === undefined) throw new UsageError("export needs --har OUT, --html OUT or --otlp OUT");
    if (files.length > 1) throw new UsageError("--har reads one log file");
    process.exitCode = await exportCommand(files[0], o as ExportOptions & { har: string });
  });
}

/** `mcp-wiretap export --har OUT [FILE]`: resolves with the exit code. */
export async function exportCommand(
  file: string | undefined,
  o: ExportOptions & { har: string },
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
  const source = isStdin(file) ? "the input" : file;
  if (records.length === 0) {
    io.stderr.write(`mcp-wiretap: ${source} holds no mcp-wiretap record${skipped > 0 ? ` (${skipped} line(s) that are not JSON records skipped)` : ""}: nothing to export\n`);
    return 1;
  }
  // Loaded here: it reads node:http, whose ESM loading alone costs every other command tens of milliseconds.
  const { buildHar, harText } = await import("./har.js");
  const har = buildHar(records, {
    creator: { name: "mcp-wiretap", version: VERSION },
    filter: compileFilters(o),
    comment: `Exported by mcp-wiretap from ${isStdin(file) ? "stdin" : file}. Bodies are rebuilt from the logged MCP messages; headers were redacted when logged.`,
  });
  if (har.log.entries.length === 0) {
    const stdioOnly = !records.some((r) => r.event === "http") && records.some((r) => String(r.server ?? "").startsWith("stdio:"));
    io.stderr.write(
      `mcp-wiretap: no HTTP exchange to export from ${source} (${records.length} record(s)${hasFilters(o) ? ", after the filters" : ""})` +
        (stdioOnly ? `: a stdio log has no HTTP exchanges; \`export --html\` or \`tail\` show it\n` : "\n"),
    );
    return 1;
  }
  const text = harText(har);
  if (o.har === "-") {
    io.stdout.write(text);
  } else {
    try {
      // A new 0600 file renamed into place (an older export others could read is not reused with its mode);
      // a link is refused, a device or a FIFO written as a stream (util/output-file).
      await writeOutputFile(o.har, text, "--har");
    } catch (err) {
      io.stderr.write(`mcp-wiretap: ${(err as Error).message}\n`);
      return 1;
    }
    io.stderr.write(`mcp-wiretap: wrote ${har.log.entries.length} entries to ${o.har}${skipped > 0 ? ` (${skipped} line(s) that are not JSON records skipped)` : ""}\n`);
  }
  return 0;
}
