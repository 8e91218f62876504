import { compileFilters, obj, type LogRecord } from "../saved-logs/filters.js";
import { parseQuery } from "../ui/web/query.js";
import { LIMITS, Page, parseCursor, requestSelector, showRecord, ToolInputError, type ShownRecord } from "./bounded.js";
import type { RecordIndex } from "./record-index.js";

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
export function searchMessages(index: RecordIndex, input: SearchInput): SearchResult {
  const text = input.query ?? "";
  const query = parseQuery(text);
  if (query.problems.length > 0) throw new ToolInputError(`query: ${query.problems.join("; ")}`);
  const tail = compileFilters(query.filters);
  const dirs = new Set(query.dir);
  const statuses = new Set(query.status);
  const words = query.text.map((t) => new RegExp(t.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"), "i"));
  const before = parseCursor(input.cursor);
  const page = new Page<SearchHit>(input.limit ?? LIMITS.limit.default, input.maxBytes ?? LIMITS.maxBytes.default);
  const maxRecordBytes = input.maxRecordBytes ?? LIMITS.maxRecordBytes.default;
  let scanned = 0;
  let next: number | null = null;
  for (const held of index.newestFirst(before)) {
    scanned++;
    const h = held.head;
    if (!tail(h)) continue;
    if (dirs.size > 0 && !dirs.has(h.direction as string)) continue;
    if (statuses.size > 0 && !statuses.has(recordStatus(h) ?? "")) continue;
    if (!words.every((re) => re.test(held.line))) continue;
    const selector = requestSelector(h);
    if (!page.add({ ...showRecord(held, maxRecordBytes), ...(selector ? { selector } : {}) })) {
      next = held.index + 1;
      break;
    }
  }
  const dropped = before !== undefined && before <= index.dropped ? "the records before this cursor are no longer held (the oldest go past the server's bounds)" : undefined;
  return { query: text, hits: page.items, scanned, truncated: next !== null, nextCursor: next === null ? null : String(next), ...(dropped ? { note: dropped } : {}) };
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
