import { writeOutputFile } from "../../util/output-file.js";
import { parseRecord } from "../../saved-logs/parse-record.js";
import { compileFilters, type RecordFilters } from "../../saved-logs/filters.js";
import { FileReadError, inputLines, isStdin } from "../../saved-logs/follow.js";
import { exportedPage } from "./assets.js";
import { mergeByTime } from "./merge-by-time.js";

/**
 * `mcp-wiretap export --html OUT [FILE…]`: one HTML file holding the UI and the matching records, that
 * opens from file:// and makes no network request. Records are embedded as logged (already redacted).
 */
export async function exportHtml(
  files: string[],
  out: string,
  filters: RecordFilters,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream; stdin: NodeJS.ReadableStream },
): Promise<number> {
  const matches = compileFilters(filters);
  const lines: string[] = [];
  const inputs = files.length === 0 ? [undefined] : files;
  try {
    // Several logs (two proxies' captures) as one, in time order, as `mcp-wiretap ui` shows them.
    await mergeByTime(
      inputs.map((file) => ({ lines: inputLines(file, io.stdin) })),
      (line) => {
        const record = parseRecord(line);
        // Session records stay whatever the filters: the page needs them to name sessions.
        if (record && (record.event === "session" || matches(record))) lines.push(line.trim());
      },
    );
  } catch (err) {
    if (err instanceof FileReadError) {
      io.stderr.write(`mcp-wiretap: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  if (!lines.some((line) => !line.includes('"event":"session"'))) {
    io.stderr.write(`mcp-wiretap: no mcp-wiretap record${files.length > 0 ? ` in ${files.join(", ")}` : " in the input"} matched: nothing to export\n`);
    return 1;
  }
  const title = `mcp-wiretap: ${inputs.map((f) => (isStdin(f) ? "stdin" : f)).join(", ")}`;
  // The offline page has no server to count tokens: the estimates go in with the records.
  // A command, not the proxy: counted in this thread.
  const [{ tokenReportInTurns }, { countInThread }] = await Promise.all([import("../../tokens/tokens-in-turns.js"), import("../../tokens/token-counter.js")]);
  const page = exportedPage(lines, title, await tokenReportInTurns(lines, countInThread));
  if (out === "-") {
    io.stdout.write(page);
    return 0;
  }
  try {
    await writeOutputFile(out, page, "--html");
  } catch (err) {
    io.stderr.write(`mcp-wiretap: ${(err as Error).message}\n`);
    return 1;
  }
  io.stderr.write(`mcp-wiretap: wrote ${lines.length} records to ${out}\n`);
  return 0;
}
