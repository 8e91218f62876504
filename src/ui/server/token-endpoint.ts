import { answerPlain, sourceBytes } from "./plain-answer.js";
import type { ServerResponse } from "node:http";
import type { CountBatch } from "../../tokens/token-counter.js";
import { oneHeldPassAtATime } from "../../saved-logs/lines-in-turns.js";
import type { RecordHistory } from "./record-history.js";
import { MAX_DOWNLOAD_SOURCE_BYTES } from "./downloads.js";

/**
 * `GET /api/tokens?upto=N`: the token estimates of the records the server holds before index `upto` (the
 * catalog's definition tokens, the tool stats' result tokens), computed when a page asks, never before: the
 * records are read in turns of the event loop (src/tokens/tokens-in-turns.ts), their texts counted by
 * `countBatch` (the UI server's worker thread, src/tokens/token-worker.ts: the tokenizer never runs on the
 * proxy's loop; if the thread cannot count, 500 with why). One count at a time (a page asking meanwhile gets
 * that one); the last answer is kept while the records it covers are unchanged. Over as many record bytes
 * as a download reads: 413, with `stats --tokens` named instead.
 */
export function tokenHandler(history: RecordHistory, countBatch: CountBatch, maxSourceBytes = MAX_DOWNLOAD_SOURCE_BYTES): (res: ServerResponse, url: URL) => void {
  let last: { start: number; end: number; body: Promise<string>; done: boolean } | null = null;
  return (res, url) => {
    const given = Number(url.searchParams.get("upto") ?? history.end);
    const end = Math.min(history.end, Number.isFinite(given) ? Math.max(history.start, given) : history.end);
    // A count under way answers every page that asks meanwhile (its `X-Wiretap-Upto` says up to where).
    if (!last || (last.done && (last.start !== history.start || last.end !== end))) {
      const { lines } = history.slice(history.start, end - history.start);
      const bytes = sourceBytes(lines);
      if (bytes > maxSourceBytes) {
        return answerPlain(res, 413, `the records held take ${Math.ceil(bytes / 1024 / 1024)} MiB, more than the page counts tokens of (${Math.floor(maxSourceBytes / 1024 / 1024)} MiB): use \`mcp-wiretap stats --tokens\` on the log file`);
      }
      // Loaded here, on the first ask: the proxy never loads it otherwise.
      const body = oneHeldPassAtATime(async () => {
        const { tokenReportInTurns } = await import("../../tokens/tokens-in-turns.js");
        return JSON.stringify(await tokenReportInTurns(lines, countBatch));
      });
      const entry = { start: history.start, end, body, done: false };
      last = entry;
      body.then(
        () => void (entry.done = true),
        () => void (last === entry && (last = null)),
      );
    }
    const counted = last.end;
    last.body.then(
      (text) => {
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), "X-Wiretap-Upto": String(counted) });
        res.end(text);
      },
      (err: unknown) => answerPlain(res, 500, `token count failed: ${(err as Error).message}`),
    );
  };
}
