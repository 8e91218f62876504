import { isToolError } from "../analysis/calls.js";
import { header, obj, str, type LogRecord } from "../saved-logs/filters.js";
import type { FileSource } from "../saved-logs/follow.js";
import { parseRecord } from "../saved-logs/parse-record.js";
import { Segment, SegmentFiles } from "./log-segments.js";

/** What the server holds by default: past either bound the oldest records go, and `dropped` counts them. */
export const DEFAULT_MAX_RECORDS = 500_000;
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;
/** Lines up to this size are read without a round trip through the thread pool. */
const SMALL_READ_BYTES = 1024 * 1024;

/** One record as held: where its line is, the file it came from, and the fields the tools select on. */
export interface HeldRecord {
  /** Absolute position: the n-th record appended (ids survive older records being dropped). */
  index: number;
  file: string;
  /** The record's routing fields (what tail's filters, the call builder and the session list read). */
  head: LogRecord;
  /** Size of its line in bytes. */
  bytes: number;
  /** The line itself, when it came from no file it can be read again from; null: read from `segment`. */
  text: string | null;
  segment: Segment | null;
  /** Byte offset of the line in the segment's file. */
  offset: number;
}

/** Where a line read from a file is. */
export interface LineAt {
  segment: Segment;
  offset: number;
  bytes: number;
}

/** A held record's line as read again: the line and the record it holds, or why it cannot be had. */
export type LineRead = { line: string; record: LogRecord } | { gone: string };

/**
 * The records of the logs served, in the order read, with a small head of each so that a search or a
 * call list never parses every line again. A record read from a file is held as its head and its place in
 * the file (the line is read again when a tool shows it): what the server holds is a fraction of the logs'
 * size. Bounded by record count and line bytes.
 */
export class RecordIndex {
  private records: HeldRecord[] = [];
  private first = 0;
  private bytes = 0;
  /** Records dropped from the front to stay within the bounds. */
  dropped = 0;
  /** Lines that were not a JSON record (a line cut short, a banner), per file. */
  readonly unreadable = new Map<string, number>();
  private readonly listeners = new Set<(held: HeldRecord) => void>();
  private readonly strings = new Map<string, string>();
  private readonly flows = new Map<string, string>();
  /** Values computed over every held record, kept until a record is added or dropped. */
  private derivedAt = -1;
  private readonly derivedValues = new Map<string, unknown>();
  readonly openFiles = new SegmentFiles();
  /** Per file (device and inode): the segment its latest content is read into. */
  private readonly segments = new Map<string, Segment>();

  constructor(
    private readonly maxRecords = DEFAULT_MAX_RECORDS,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {}

  /** The segment the lines read from `source` go to, its file opened; a truncation retires the one before. */
  async segmentOf(source: FileSource): Promise<Segment> {
    const key = `${source.dev}:${source.ino}`;
    const known = this.segments.get(key);
    if (known?.source === source) return known;
    if (known) {
      if (source.truncations > known.source.truncations) this.openFiles.retire(known, `${known.file} was truncated after these records were read: their text is gone`);
      else this.openFiles.release(known);
    }
    const segment = new Segment(source);
    this.segments.set(key, segment);
    await this.openFiles.attach(segment);
    return segment;
  }

  /** Adds a record: its line read from a file (`at`: the line is not kept), or a line kept as it is. */
  append(line: string, file: string, at?: LineAt): void {
    if (line.trim() === "") return;
    const record = parseRecord(line);
    if (record === null) {
      this.unreadable.set(file, (this.unreadable.get(file) ?? 0) + 1);
      return;
    }
    const head = headOf(record, this.strings);
    if (typeof head.flow === "string") head.flow = this.sharedFlow(head.flow);
    const held: HeldRecord = at
      ? { index: this.end, file, head, bytes: at.bytes, text: null, segment: at.segment, offset: at.offset }
      : { index: this.end, file, head, bytes: Buffer.byteLength(line), text: line, segment: null, offset: 0 };
    if (held.segment) held.segment.held++;
    (head as Record<symbol, HeldRecord>)[HELD] = held;
    this.records.push(held);
    this.bytes += held.bytes;
    while (this.size > this.maxRecords || (this.bytes > this.maxBytes && this.size > 1)) this.dropOldest();
    if (this.first > 65_536 && this.first * 2 > this.records.length) {
      this.records = this.records.slice(this.first);
      this.first = 0;
    }
    for (const l of this.listeners) l(held);
  }

  private dropOldest(): void {
    const old = this.records[this.first]!;
    this.bytes -= old.bytes;
    if (old.segment && --old.segment.held === 0) {
      this.openFiles.release(old.segment);
      const key = `${old.segment.source.dev}:${old.segment.source.ino}`;
      if (this.segments.get(key) === old.segment) this.segments.delete(key);
    }
    this.records[this.first] = EMPTY;
    this.first++;
    this.dropped++;
  }

  /** A held record's line, read again from its file (and checked to be the record it was). */
  async read(held: HeldRecord): Promise<LineRead> {
    if (held.text !== null) return { line: held.text, record: JSON.parse(held.text) as LogRecord };
    // A line of usual size is read at once (as a search's blocks are): a page of hits is many small reads.
    const into = Buffer.allocUnsafe(held.bytes);
    const bytes = held.bytes <= SMALL_READ_BYTES ? await this.openFiles.readNow(held.segment!, held.offset, held.bytes, into) : await this.openFiles.read(held.segment!, held.offset, held.bytes, into);
    if (typeof bytes === "string") return { gone: bytes };
    return checkedLine(held, bytes.toString("utf8"));
  }

  async readMany(held: readonly HeldRecord[]): Promise<LineRead[]> {
    const out: LineRead[] = [];
    for (const h of held) out.push(await this.read(h));
    return out;
  }

  async close(): Promise<void> {
    await this.openFiles.closeAll();
  }

  get size(): number {
    return this.records.length - this.first;
  }

  /** Absolute index the next record will get. */
  get end(): number {
    return this.dropped + this.size;
  }

  get heldBytes(): number {
    return this.bytes;
  }

  at(index: number): HeldRecord | undefined {
    if (index < this.dropped || index >= this.end) return undefined;
    return this.records[this.first + index - this.dropped];
  }

  /** Held records from newest to oldest, starting below absolute index `before`. */
  *newestFirst(before = this.end): Generator<HeldRecord> {
    for (let i = Math.min(before, this.end) - 1; i >= this.dropped; i--) yield this.records[this.first + i - this.dropped]!;
  }

  /** Every held record, oldest first. */
  *all(): Generator<HeldRecord> {
    for (let i = this.first; i < this.records.length; i++) yield this.records[i]!;
  }

  /** The held record a head belongs to (heads travel through the call builder and come back). */
  heldOf(head: LogRecord): HeldRecord | undefined {
    return (head as Record<symbol, HeldRecord | undefined>)[HELD];
  }

  /** An exchange's records are written close together: their flow id is held once (recent flows only). */
  private sharedFlow(flow: string): string {
    const known = this.flows.get(flow);
    if (known !== undefined) return known;
    if (this.flows.size >= 10_000) this.flows.clear();
    this.flows.set(flow, flow);
    return flow;
  }

  heads(): LogRecord[] {
    const out: LogRecord[] = [];
    for (const held of this.all()) out.push(held.head);
    return out;
  }

  /** `compute()` over the held records, computed once per state of the index (a new record recomputes it). */
  derived<T>(name: string, compute: () => T): T {
    const state = this.end * 2 + this.dropped;
    if (state !== this.derivedAt) {
      this.derivedValues.clear();
      this.derivedAt = state;
    }
    if (!this.derivedValues.has(name)) this.derivedValues.set(name, compute());
    return this.derivedValues.get(name) as T;
  }

  onAppend(listener: (held: HeldRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Where a head keeps its held record (a symbol: never serialized, never seen by the filters). */
const HELD = Symbol("held");
const DECISIONS: Record<string, LogRecord> = { allow: Object.freeze({ action: "allow" }), flag: Object.freeze({ action: "flag" }), deny: Object.freeze({ action: "deny" }) };

const EMPTY: HeldRecord = { index: -1, file: "", head: {}, bytes: 0, text: "", segment: null, offset: 0 };

/** The line read again is the record held only if it has the same head (a file rewritten in place has not). */
export function checkedLine(held: HeldRecord, line: string): LineRead {
  const record = parseRecord(line);
  if (record === null || JSON.stringify(headOf(record)) !== JSON.stringify(held.head)) return { gone: `${held.file} no longer holds this record where it was read (rewritten in place)` };
  return { line, record };
}

/** Top-level fields kept as they are: small scalars every record type may carry. */
const SCALARS = ["event", "time", "kind", "direction", "id", "server", "target", "session", "flow", "call", "transport", "protocolVersion", "method", "tool", "replayOf", "bytes", "latencyMs", "resultType", "phase", "status", "reason", "roundProblem"] as const;
/** Fields whose few values repeat on every record: held once each (a log's heads would otherwise double its size). */
const REPEATING = new Set<string>(["event", "kind", "direction", "server", "target", "session", "transport", "protocolVersion", "method", "tool", "resultType", "phase", "reason"]);
const INTERNED_MAX = 100_000;

/**
 * The fields of a record the tools select and count on: every one `compileFilters`, `buildCalls` and the
 * session list read. Payloads stay in the line; a session start keeps its (small, shaped) client and server info.
 */
export function headOf(r: LogRecord, strings: Map<string, string> = new Map()): LogRecord {
  const head: LogRecord = {};
  for (const key of SCALARS) {
    let v = r[key];
    if (v === undefined || (v !== null && typeof v === "object")) continue;
    if (typeof v === "string" && REPEATING.has(key)) v = intern(strings, v);
    head[key] = v;
  }
  if (r.id !== undefined && typeof r.id === "object") head.id = r.id;
  const decision = obj(r.decision);
  const action = str(decision?.action);
  if (action !== null) head.decision = DECISIONS[action] ?? { action };
  const related = obj(r.related);
  if (related) head.related = { id: related.id, method: related.method, tool: related.tool };
  const session = header(r.requestHeaders, "mcp-session-id");
  if (session !== undefined) head.requestHeaders = { "mcp-session-id": session };
  if (isToolError(r)) head.isError = true;
  const error = obj(r.error);
  if (error && (typeof error.code === "number" || typeof error.message === "string")) head.error = { code: error.code, message: typeof error.message === "string" ? error.message.slice(0, 500) : undefined };
  if (r.event === "session" && r.phase === "start") {
    head.clientInfo = nameAndVersion(r.clientInfo);
    head.serverInfo = nameAndVersion(r.serverInfo);
  }
  return head;
}

function intern(strings: Map<string, string>, v: string): string {
  const known = strings.get(v);
  if (known !== undefined) return known;
  // Bounded: past it, new values are simply not shared.
  if (strings.size < INTERNED_MAX && v.length <= 256) strings.set(v, v);
  return v;
}

function nameAndVersion(v: unknown): LogRecord | undefined {
  const o = obj(v);
  if (!o) return undefined;
  return { name: str(o.name)?.slice(0, 200) ?? null, version: str(o.version)?.slice(0, 100) ?? null };
}
