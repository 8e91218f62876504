import { checkedLine, type HeldRecord, type LineRead, type RecordIndex } from "./record-index.js";

/**
 * Bytes of a file read at once when searching for words: consecutive records of one file share one read.
 * Under V8's largest young-generation object (128 KiB): the block's text is young garbage, not a fresh
 * large-object page per block (measured: slower to make, and what it takes is given back later).
 */
export const BLOCK_BYTES = 120 * 1024;

/**
 * The held records from absolute index `from` downwards that one read can cover: consecutive records of
 * one file, in the file's order, within BLOCK_BYTES (a record over it alone). Newest first.
 */
export function batchFrom(index: RecordIndex, from: number): HeldRecord[] {
  const first = index.at(from);
  if (first === undefined) return [];
  const out = [first];
  if (first.segment === null) return out;
  const end = first.offset + first.bytes;
  let low = first.offset;
  for (let i = from - 1; i >= index.dropped; i--) {
    const h = index.at(i)!;
    if (h.segment !== first.segment || h.offset + h.bytes > low || end - h.offset > BLOCK_BYTES) break;
    out.push(h);
    low = h.offset;
  }
  return out;
}

/** The records of a batch that hold every word, and their lines as read for it. */
export interface WordMatches {
  matched: Set<HeldRecord>;
  /** The line of a matched record, from the bytes the search read (checked to be the record held). */
  lineOf(held: HeldRecord): LineRead;
  /** Why some records' text could not be read (they count as not matching). */
  gone: string | null;
}

/**
 * Free words matched case-insensitively anywhere in a record's line, as a RegExp with the `i` flag matches
 * them in the decoded line. Words of ASCII only (the usual case) are matched in the bytes read as latin1:
 * without the `u` flag, `i` never matches an ASCII letter to a non-ASCII character, and latin1 makes byte
 * offsets string offsets, so one pass over a whole read finds the records; other words are matched in
 * each record's decoded line.
 */
export class WordMatcher {
  private readonly ascii: boolean;
  private readonly patterns: RegExp[];
  private buffer: Buffer | null = null;

  constructor(words: readonly string[]) {
    this.ascii = words.every((w) => /^[\x00-\x7f]*$/.test(w));
    this.patterns = words.map((w) => new RegExp(w.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"), this.ascii ? "gi" : "i"));
  }

  /** `candidates`: records of one batch (`batchFrom`), newest first. */
  async match(index: RecordIndex, candidates: readonly HeldRecord[]): Promise<WordMatches> {
    const first = candidates[0]!;
    if (first.segment === null) {
      const text = first.text!;
      const matched = new Set(this.patterns.every((re) => test(re, text)) ? [first] : []);
      return { matched, lineOf: (h) => checkedLine(h, h.text!), gone: null };
    }
    const ordered = [...candidates].reverse();
    const base = ordered[0]!.offset;
    const length = first.offset + first.bytes - base;
    const into = length <= BLOCK_BYTES ? (this.buffer ??= Buffer.allocUnsafe(BLOCK_BYTES)) : Buffer.allocUnsafe(length);
    const bytes = await index.openFiles.readNow(first.segment, base, length, into);
    if (typeof bytes === "string") return { matched: new Set(), lineOf: () => ({ gone: bytes }), gone: bytes };
    const lineOf = (h: HeldRecord): LineRead => checkedLine(h, bytes.toString("utf8", h.offset - base, h.offset - base + h.bytes));
    if (!this.ascii) {
      const matched = new Set(ordered.filter((h) => this.patterns.every((re) => test(re, bytes.toString("utf8", h.offset - base, h.offset - base + h.bytes)))));
      return { matched, lineOf, gone: null };
    }
    const text = bytes.toString("latin1");
    let matched: HeldRecord[] = ordered;
    for (const re of this.patterns) matched = recordsMatching(re, text, matched, base);
    return { matched: new Set(matched), lineOf, gone: null };
  }
}

function test(re: RegExp, text: string): boolean {
  re.lastIndex = 0;
  return re.test(text);
}

/** Those of `records` (in file order) whose bytes within `text` (starting at file offset `base`) match `re` (global). */
function recordsMatching(re: RegExp, text: string, records: readonly HeldRecord[], base: number): HeldRecord[] {
  const out: HeldRecord[] = [];
  let k = 0;
  re.lastIndex = records.length > 0 ? records[0]!.offset - base : 0;
  while (k < records.length) {
    const m = re.exec(text);
    if (m === null) break;
    const at = m.index;
    while (k < records.length && records[k]!.offset - base + records[k]!.bytes <= at) k++;
    if (k === records.length) break;
    const start = records[k]!.offset - base;
    const end = start + records[k]!.bytes;
    if (at < start) {
      // A match between records (or in one not searched): go on from the next record's start.
      re.lastIndex = start;
      continue;
    }
    if (at + m[0].length <= end) out.push(records[k]!);
    re.lastIndex = end;
    k++;
  }
  return out;
}
