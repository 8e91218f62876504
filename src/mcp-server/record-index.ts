import { isToolError } from "../analysis/calls.js";
import { header, obj, str, type LogRecord } from "../saved-logs/filters.js";
import { parseRecord } from "../saved-logs/parse-record.js";

/** What the server holds by default: past either bound the oldest records go, and `dropped` counts them. */
export const DEFAULT_MAX_RECORDS = 500_000;
export const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;

/** One record as held: its line as logged, the file it came from, and the fields the tools select on. */
export interface HeldRecord {
  /** Absolute position: the n-th record appended (ids survive older records being dropped). */
  index: number;
  line: string;
  file: string;
  /** The record's routing fields (what tail's filters, the call builder and the session list read). */
  head: LogRecord;
}

/**
 * The records of the logs served, in the order read, with a small head of each so that a search or a
 * call list never parses every line again. Bounded by record count and line bytes (UTF-16 units).
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

  constructor(
    private readonly maxRecords = DEFAULT_MAX_RECORDS,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
  ) {}

  append(line: string, file: string): void {
    if (line.trim() === "") return;
    const record = parseRecord(line);
    if (record === null) {
      this.unreadable.set(file, (this.unreadable.get(file) ?? 0) + 1);
      return;
    }
    const head = headOf(record, this.strings);
    if (typeof head.flow === "string") head.flow = this.sharedFlow(head.flow);
    const held: HeldRecord = { index: this.end, line, file, head };
    (head as Record<symbol, HeldRecord>)[HELD] = held;
    this.records.push(held);
    this.bytes += line.length;
    while (this.size > this.maxRecords || (this.bytes > this.maxBytes && this.size > 1)) {
      this.bytes -= this.records[this.first]!.line.length;
      this.records[this.first] = EMPTY;
      this.first++;
      this.dropped++;
    }
    if (this.first > 65_536 && this.first * 2 > this.records.length) {
      this.records = this.records.slice(this.first);
      this.first = 0;
    }
    for (const l of this.listeners) l(held);
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

  /** Names of the files records were read from, in the order first seen. */
  files(): string[] {
    const seen = new Set<string>();
    for (const held of this.all()) seen.add(held.file);
    return [...seen];
  }

  onAppend(listener: (held: HeldRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/** Where a head keeps its held record (a symbol: never serialized, never seen by the filters). */
const HELD = Symbol("held");
const DECISIONS: Record<string, LogRecord> = { allow: Object.freeze({ action: "allow" }), flag: Object.freeze({ action: "flag" }), deny: Object.freeze({ action: "deny" }) };

const EMPTY: HeldRecord = { index: -1, line: "", file: "", head: {} };

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
