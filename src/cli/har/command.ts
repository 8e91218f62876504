import { writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { VERSION } from "../package-info.js";
import { UsageError } from "../../util/usage-error.js";
import { addFilterOptions, parseRecord } from "../tail/command.js";
import { compileFilters, type LogRecord, type RecordFilters } from "../tail/filters.js";
import { FileReadError, inputLines, isStdin } from "../tail/follow.js";
import { buildHar } from "./har.js";

export interface ExportOptions extends RecordFilters {
  /** Where the HAR goes ("-": stdout). */
  har: string;
}

export function registerExportCommand(program: Command): void {
  const command = program
    .command("export")
    .argument("[files...]", "NDJSON log(s) written by `start` (- or absent: stdin); --har takes one")
    .description("convert a log to HAR 1.2 (--har: browser dev tools, HTTP Toolkit) or to OTLP/JSON spans and metrics (--otlp: an OpenTelemetry Collector)")
    .option("--har <out>", "the HAR file to write (- for stdout)")
    .option("--otlp <out>", "the OTLP/JSON lines file to write (- for stdout; never overwritten)")
    .option("--otlp-payloads", "with --otlp: put the logged (redacted) tool arguments and results on spans", false);
  addFilterOptions(command).action(async (files: string[], o: ExportOptions & { otlp?: string; otlpPayloads?: boolean }) => {
    if ((o.har === undefined) === (o.otlp === undefined)) throw new UsageError("export needs exactly one of --har OUT or --otlp OUT");
    if (o.otlp !== undefined) {
      process.exitCode = await (await import("../../otel/offline-export.js")).exportOtlpCommand(files, { otlp: o.otlp, otlpPayloads: o.otlpPayloads ?? false, filter: compileFilters(o) }, VERSION);
      return;
    }
    if (files.length > 1) throw new UsageError("--har converts one log at a time");
    process.exitCode = await exportCommand(files[0], o);
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
      await writeFile(o.har, text, { mode: 0o600 });
    } catch (err) {
      io.stderr.write(`mcp-wiretap: cannot write ${o.har}: ${(err as Error).message}\n`);
      return 1;
    }
    io.stderr.write(`mcp-wiretap: wrote ${har.log.entries.length} entries to ${o.har}${skipped > 0 ? ` (${skipped} line(s) that are not JSON records skipped)` : ""}\n`);
  }
  return 0;
}
