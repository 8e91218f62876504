import { compileFilters, obj, type LogRecord } from "../saved-logs/filters.js";
import { parseQuery } from "../saved-logs/filter-query.js";
import { LIMITS, Page, parseCursor, requestSelector, shownAs, ToolInputError, type ShownRecord } from "./bounded.js";
import type { RecordIndex } from "./record-index.js";
import { batchFrom, WordMatcher } from "./text-scan.js";

export interface SearchInput {
  query?: string;
  limit?: number;
  cursor?: string;
  maxBytes?: number;
  maxRecordBytes?: number;
}

export interface SearchHit extends ShownRecord {
  /** `<flow>#<id>` of a request (what get_exchange and replay_call take). */
  selector?: string;
}

export interface SearchResult {
  query: string;
  hits: SearchHit[];
  /** Records looked at for this page. */
  scanned: number;
  truncated: boolean;
  nextCursor: string | null;
  note?: string;
}

/**
 * `search_messages`: the records matching the filter box's words, newest first. `tail`'s tokens
 * (`server:` `session:` `method:` `tool:` `decision:`, globs and comma lists), `dir:client|server`,
 * `status:ok|error|pending|denied` (of the record itself), and free words matched case-insensitively
 * anywhere in the record's line.
 */
export async function searchMessages(index: RecordIndex, input: SearchInput): Promise<SearchResult> {
  const text = input.query ?? "";
  const query = parseQuery(text);
  if (query.problems.length > 0) throw new ToolInputError(`query: ${query.problems.join("; ")}`);
  const tail = compileFilters(query.filters);
  const dirs = new Set(query.dir);
  const statuses = new Set(query.status);
  const words = query.text.length > 0 ? new WordMatcher(query.text) : null;
  const selected = (h: LogRecord): boolean => tail(h) && (dirs.size === 0 || dirs.has(h.direction as string)) && (statuses.size === 0 || statuses.has(recordStatus(h) ?? ""));
  const before = parseCursor(input.cursor);
  const page = new Page<SearchHit>(input.limit ?? LIMITS.limit.default, input.maxBytes ?? LIMITS.maxBytes.default);
  const maxRecordBytes = input.maxRecordBytes ?? LIMITS.maxRecordBytes.default;
  const start = Math.min(before ?? index.end, index.end);
  let lookedAt = start;
  let next: number | null = null;
  let gone: string | null = null;
  // A batch at a time (the records one read covers), newest first: the file is read only where words are sought.
  scan: for (let i = start - 1; i >= index.dropped; ) {
    const batch = batchFrom(index, i);
    if (batch.length === 0) break;
    i -= batch.length;
    const candidates = batch.filter((h) => selected(h.head));
    const chosen = new Set(candidates);
    if (candidates.length === 0) {
      lookedAt = batch.at(-1)!.index;
      continue;
    }
    const found = words === null ? null : await words.match(index, candidates);
    gone ??= found?.gone ?? null;
    for (const held of batch) {
      lookedAt = held.index;
      if (!chosen.has(held) || (found !== null && !found.matched.has(held))) continue;
      const shown = held.bytes > maxRecordBytes ? shownAs(held, null) : shownAs(held, found !== null ? found.lineOf(held) : await index.read(held));
      const selector = requestSelector(held.head);
      if (!page.add({ ...shown, ...(selector ? { selector } : {}) })) {
        next = held.index + 1;
        break scan;
      }
    }
  }
  const notes = [
    ...(before !== undefined && before <= index.dropped ? ["the records before this cursor are no longer held (the oldest go past the server's bounds)"] : []),
    ...(gone !== null ? [`some records' text could not be read again, so their words were not searched: ${gone}`] : []),
  ];
  return { query: text, hits: page.items, scanned: start - lookedAt, truncated: next !== null, nextCursor: next === null ? null : String(next), ...(notes.length > 0 ? { note: notes.join("; ") } : {}) };
}

/** A record's own status, as the filter box's `status:` reads it. */
function recordStatus(h: LogRecord): string | null {
  if (obj(h.decision)?.action === "deny") return "denied";
  const kind = h.kind;
  if (kind === "error" || kind === "invalid" || (kind === "response" && h.isError === true)) return "error";
  if (kind === "unanswered") return "pending";
  if (kind === "response") return "ok";
  return null;
}
