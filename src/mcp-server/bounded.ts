import { z } from "zod";
import { selectorOf } from "../saved-logs/selector.js";
import type { LogRecord } from "../saved-logs/filters.js";
import type { HeldRecord, LineRead, RecordIndex } from "./record-index.js";

/**
 * Every answer is bounded: a number of items (`limit`), a byte budget for the whole answer (`maxBytes`) and
 * one for each record shown whole (`maxRecordBytes`). What is cut is said: `truncated`, the sizes, and a
 * cursor to go on from. Records are shown as logged, never rewritten: a record over its budget is shown
 * by its head (the routing fields) with its size.
 */
export const LIMITS = {
  limit: { default: 20, max: 500 },
  maxBytes: { default: 60_000, max: 1_000_000 },
  maxRecordBytes: { default: 4_000, max: 1_000_000 },
} as const;

export const pageInput = {
  limit: z.number().int().min(1).max(LIMITS.limit.max).optional().describe(`items at most (default ${LIMITS.limit.default})`),
  cursor: z.string().max(40).optional().describe("nextCursor of the previous page"),
  maxBytes: z.number().int().min(1_000).max(LIMITS.maxBytes.max).optional().describe(`answer size budget in bytes (default ${LIMITS.maxBytes.default})`),
};

export const recordBudgetInput = {
  maxRecordBytes: z.number().int().min(0).max(LIMITS.maxRecordBytes.max).optional().describe(`records larger than this are shown by their head only (default ${LIMITS.maxRecordBytes.default})`),
};

/** A record as shown: the whole record when within budget, else only its head. */
export const shownRecordSchema = z.object({
  index: z.number().int().describe("position in the served logs (stable while the server runs)"),
  file: z.string(),
  bytes: z.number().int().describe("size of the record's line"),
  record: z.record(z.string(), z.unknown()).optional().describe("the record as logged"),
  head: z.record(z.string(), z.unknown()).optional().describe("its routing fields, when the record was over maxRecordBytes"),
  cut: z.boolean().optional(),
  gone: z.string().optional().describe("why the record's text can no longer be read from its file (shown by its head)"),
});
export type ShownRecord = z.infer<typeof shownRecordSchema>;

/** A record within budget is read again from its file; one over it (or no longer readable) is shown by its head. */
export async function showRecord(index: RecordIndex, held: HeldRecord, maxRecordBytes: number): Promise<ShownRecord> {
  return shownAs(held, held.bytes <= maxRecordBytes ? await index.read(held) : null);
}

export function shownAs(held: HeldRecord, read: LineRead | null): ShownRecord {
  const shown = { index: held.index, file: held.file, bytes: held.bytes };
  if (read !== null && "record" in read) return { ...shown, record: read.record };
  return { ...shown, head: Object.fromEntries(Object.entries(held.head)), ...(read === null ? { cut: true } : { gone: read.gone }) };
}

export const cutSchema = z.object({
  truncated: z.boolean().describe("more matched than this answer holds"),
  nextCursor: z.string().nullable().describe("pass as cursor for the next page; null at the end"),
  omitted: z.number().int().optional().describe("items left out of this answer (when known)"),
  note: z.string().optional(),
});

/** Collects items until the item limit or the byte budget is reached. */
export class Page<T> {
  readonly items: T[] = [];
  private bytes = 2;
  full = false;

  constructor(
    readonly limit: number,
    readonly maxBytes: number,
  ) {}

  /** Adds the item if it fits; false (and `full`) when it does not. The first item always goes in. */
  add(item: T): boolean {
    if (this.items.length >= this.limit) return !(this.full = true);
    const size = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (this.items.length > 0 && this.bytes + size > this.maxBytes) return !(this.full = true);
    this.items.push(item);
    this.bytes += size;
    return true;
  }
}

/** A cursor is the absolute index to continue below (newest first). */
export function parseCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  if (!/^\d{1,15}$/.test(cursor)) throw new ToolInputError(`cursor ${JSON.stringify(cursor.slice(0, 40))}: not one this server gave`);
  return Number(cursor);
}

/** A tool argument the server cannot act on: answered as a tool error saying why. */
export class ToolInputError extends Error {}

export function requestSelector(head: LogRecord): string | null {
  return head.kind === "request" && typeof head.flow === "string" && (typeof head.id === "string" || typeof head.id === "number") ? selectorOf(head.flow, head.id) : null;
}
