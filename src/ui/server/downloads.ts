import type { ServerResponse } from "node:http";
import { answerPlain, sourceBytes } from "./plain-answer.js";
import { str, type LogRecord } from "../../saved-logs/filters.js";
import { eachLineInTurns, oneHeldPassAtATime } from "../../saved-logs/lines-in-turns.js";
import { parseRecord } from "../../saved-logs/parse-record.js";
import { Store, type Msg } from "../web/model.js";
import { compileQuery } from "../web/query.js";
import { exportedPage } from "./assets.js";
import type { RecordHistory } from "./record-history.js";
import type { CountBatch } from "../../tokens/token-counter.js";

/**
 * Record bytes a download may read: each is parsed, so a download holds a few times this while it is put
 * together, in the process that may be the proxy. Past it the page is told to use `export`/`tail` on the log.
 */
export const MAX_DOWNLOAD_SOURCE_BYTES = 64 * 1024 * 1024;

const FORMATS = {
  "records.ndjson": { type: "application/x-ndjson; charset=utf-8", ext: "ndjson" },
  "capture.har": { type: "application/json; charset=utf-8", ext: "har" },
  "capture.html": { type: "text/html; charset=utf-8", ext: "html" },
} as const;
type Format = keyof typeof FORMATS;

/**
 * `GET /api/download/{records.ndjson,capture.har,capture.html}?q=FILTER&upto=N`: what the page shows under
 * the filter box's FILTER, read by the page's own model and filter (src/ui/web/model.ts, query.ts) over the
 * records the server holds before index `upto` (where the page stood; a paused page stood earlier). The
 * messages the filter matches (the list with "group exchanges" off), as logged; the HAR of their exchanges
 * (the `export` command's writer); or the self-contained page (`export --html`'s) holding them with their
 * sessions' and exchanges' records. Nothing but logged lines goes out: redacted as the log is. Read-only;
 * one download is put together at a time (each holds a parsed copy of the records), the others get 429; one
 * over more than `maxSourceBytes` of records is refused (413).
 */
export function downloadHandler(history: RecordHistory, source: string, countBatch: CountBatch, maxSourceBytes = MAX_DOWNLOAD_SOURCE_BYTES): (res: ServerResponse, url: URL) => void {
  let busy = false;
  return (res, url) => {
    const name = url.pathname.slice("/api/download/".length);
    if (!Object.hasOwn(FORMATS, name)) return answerPlain(res, 404, "no such download (records.ndjson, capture.har or capture.html)");
    const query = url.searchParams.get("q") ?? "";
    const filter = compileQuery(query);
    if (filter.problems.length > 0) return answerPlain(res, 400, `filter not understood: ${filter.problems.join(", ")}`);
    if (busy) return answerPlain(res, 429, "another download is being put together: try again in a moment");
    const given = Number(url.searchParams.get("upto") ?? history.end);
    const { lines } = history.slice(history.start, Math.max(0, (Number.isFinite(given) ? given : history.end) - history.start));
    const bytes = sourceBytes(lines);
    if (bytes > maxSourceBytes) {
      return answerPlain(res, 413, `the records shown take ${Math.ceil(bytes / 1024 / 1024)} MiB, more than a download reads (${Math.floor(maxSourceBytes / 1024 / 1024)} MiB): use \`mcp-wiretap export\` or \`tail\` with filters on the log file`);
    }
    busy = true;
    oneHeldPassAtATime(() => build(name as Format, lines, query, filter.test, source, countBatch))
      .then(
        (body) => {
          const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
          res.writeHead(200, {
            "Content-Type": FORMATS[name as Format].type,
            "Content-Disposition": `attachment; filename="mcp-wiretap-${stamp}.${FORMATS[name as Format].ext}"`,
            "Content-Length": Buffer.byteLength(body.text),
            "X-Wiretap-Matched": String(body.matched),
          });
          res.end(body.text);
        },
        (err: unknown) => answerPlain(res, 500, `download failed: ${(err as Error).message}`),
      )
      .finally(() => {
        busy = false;
      });
  };
}

async function build(format: Format, lines: readonly string[], query: string, test: (m: Msg) => boolean, source: string, countBatch: CountBatch): Promise<{ text: string; matched: number }> {
  const store = new Store();
  const records: { record: LogRecord; line: string }[] = [];
  await eachLineInTurns(lines, (line) => {
    const record = parseRecord(line);
    if (record === null) return;
    records.push({ record, line });
    store.add(record, line);
  });
  const matched: Msg[] = [];
  await eachLineInTurns(store.msgs.map((m) => m.line), (_line, i) => void (test(store.msgs[i]!) && matched.push(store.msgs[i]!)));
  if (format === "records.ndjson") return { text: matched.map((m) => `${m.line}\n`).join(""), matched: matched.length };
  const kept = new Set<LogRecord>(matched.map((m) => m.record));
  const what = `${source}${query.trim() ? `, filter: ${query.trim()}` : ""}`;
  if (format === "capture.har") {
    // Loaded here, as the export command loads it: it reads node:http.
    const { buildHarInTurns, harTextInTurns } = await import("../../cli/har/har.js");
    const { VERSION } = await import("../../util/package-info.js");
    const har = await buildHarInTurns(
      records.map((r) => r.record),
      { creator: { name: "mcp-wiretap", version: VERSION }, filter: (r) => kept.has(r), comment: `Downloaded from the mcp-wiretap UI (${what}). Bodies are rebuilt from the logged MCP messages; headers were redacted when logged.` },
    );
    return { text: await harTextInTurns(har), matched: matched.length };
  }
  // The page needs the sessions' records to name them, and the exchanges' http records for their headers.
  const flows = new Set<string | null>(matched.map((m) => str(m.record.flow)));
  flows.delete(null);
  const page = records.filter(({ record: r }) => kept.has(r) || r.event === "session" || (r.event === "http" && flows.has(str(r.flow))));
  const pageLines = page.map((r) => r.line);
  // Its token estimates go in with them, as `export --html` puts them (counted as /api/tokens counts).
  const { tokenReportInTurns } = await import("../../tokens/tokens-in-turns.js");
  return { text: exportedPage(pageLines, `mcp-wiretap: ${what}`, await tokenReportInTurns(pageLines, countBatch)), matched: matched.length };
}
