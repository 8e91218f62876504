import { fstatSync, mkdirSync } from "node:fs";
import path from "node:path";
import pino, { type Logger } from "pino";
import { AuditChain } from "./audit-chain.js";
import { prepareAuditChain, statePathFor } from "./audit-state.js";
import { BatchWriter, type BatchWriterOptions } from "./batch-writer.js";
import { escapeLine } from "./escape-line.js";
import { ExchangeSecrets } from "./exchange-secrets.js";
import { guardRecord } from "./record-guard.js";
import { serializeRecordsOnce } from "./record-json.js";
import { LogHealth, type OnLogError } from "./log-health.js";
import { UsageError } from "../util/usage-error.js";
import { descriptorOfPath } from "../util/private-file.js";
import { lockLogFile, type WriterLock } from "./writer-lock.js";
import { RecordStream, teeToRecordStream } from "../sinks/record-stream.js";

export type { Logger };

export interface LogSink {
  logger: Logger;
  /** Where records go, for the banner: a file path or "stdout". */
  target: string;
  health: LogHealth;
  /** Credentials of each exchange, removed by value from its records (register `secrets.addon()`). */
  secrets: ExchangeSecrets;
  /** Every record line as written, for subscribers (the web UI feed); see sinks/record-stream.ts. */
  records: RecordStream;
  /** Writes a record line made elsewhere (a replay's own proxy) as this sink's own: chained, teed, written. */
  writeLine(line: string): void;
  /** Writes out everything buffered; call before exit. */
  flush(): Promise<void>;
}

export interface LogFileOptions {
  file?: string;
  /** Rotate the file when it grows past this many bytes (logrotate style: file.1 … file.N). */
  maxSize?: number;
  /** Rotated files kept. */
  keep?: number;
  /** Records go here instead (tests, `run` sending records to stderr). */
  stream?: NodeJS.WritableStream;
  /** File descriptor when no file is given; default stdout. */
  fd?: number;
  /**
   * Chain and seal every record (`seq`, `prevHash`, `mac`), with the key and the state of the log kept in
   * `dir` (see audit-state.ts).
   */
  auditChain?: { dir: string };
  onError?: OnLogError;
  /** Members every record of this sink carries (a replay's `replayOf`), written right after `time`. */
  recordFields?: Record<string, string>;
}

export class LogFileError extends UsageError {}

/** Bound on records held in memory while the destination cannot keep up (or fails): past it they are dropped and counted. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/**
 * One NDJSON record per line (pino). Log files are created 0600 (new folders above them 0700): they describe
 * the traffic of every MCP client that uses the proxy. An existing file is appended to only when it is a
 * regular file of ours that nobody else can read; a symbolic link is refused (see util/private-file).
 */
export function createLogSink(opts: LogFileOptions = {}): LogSink {
  const secrets = new ExchangeSecrets();
  const options: pino.LoggerOptions = {
    base: opts.recordFields ?? undefined,
    timestamp: isoTime,
    formatters: { level: (label) => ({ level: label }) },
    messageKey: "msg",
    // Once per line, before the audit chain hashes it: no raw control, bidi or invisible character is written.
    hooks: { streamWrite: escapeLine },
  };
  const target = opts.stream ? "stream" : (opts.file ?? (opts.fd === 2 ? "stderr" : "stdout"));
  const health = new LogHealth(opts.onError ?? "pass", target);
  // One writer per log: its lock is taken before the file is opened (devices and FIFOs are never locked).
  const locks: WriterLock[] = opts.file && !opts.stream ? lockLog(opts.file) : [];
  const releaseLocks = (): void => {
    for (const l of locks.splice(0)) l.release();
  };
  let audit: ReturnType<typeof prepareAuditChain> | null = null;
  let chain: AuditChain | null = null;
  let saved = -1;
  // After each write that left nothing queued: the newest record handed over is in the file.
  const checkpoint = (): void => {
    const last = chain?.last;
    if (!audit?.state || !last || last.seq === saved) return;
    saved = last.seq;
    audit.state.save(last, chain?.identity ?? null);
  };
  let base: ReturnType<typeof writerDestination> | { stream: pino.DestinationStream; flush: () => Promise<void>; describe: string; file: null };
  try {
    base = opts.stream
      ? { stream: opts.stream as unknown as pino.DestinationStream, flush: async () => {}, describe: target, file: null }
      : writerDestination(opts, target, health, checkpoint);
  } catch (error) {
    releaseLocks();
    throw error;
  }
  if (opts.auditChain) {
    try {
      // A stream (a device, a FIFO, stdout) keeps no state: nothing can be read back from it to verify.
      audit = prepareAuditChain(opts.auditChain.dir, base.file);
      // The audit state has one writer too (the folder now made).
      const stateLock = base.file && locks.length > 0 ? lockLogFile(statePathFor(opts.auditChain.dir, base.file), "the audit state") : null;
      if (stateLock) locks.push(stateLock);
    } catch (error) {
      void base.flush();
      releaseLocks();
      throw error;
    }
    saved = audit.from?.seq ?? -1;
  }
  // The tee sits after the audit chain: subscribers see each line exactly as written.
  const records = new RecordStream();
  const tee = teeToRecordStream(base.stream as unknown as { write(chunk: string): unknown }, records);
  if (audit) chain = new AuditChain(tee, audit.keys, audit.from);
  const logger = pino(options, (chain ?? tee) as pino.DestinationStream);
  // Every record, whoever writes it, loses the credentials its exchange carried and secret-shaped values.
  serializeRecordsOnce(logger, (record) => guardRecord(record, secrets));
  records.setDropReporter((r) => logger.warn({ event: "record_stream_drops", ...r }));
  const flush = async (): Promise<void> => {
    records.close();
    await base.flush();
    audit?.state?.close();
    releaseLocks();
  };
  const writeLine = (line: string): void => void (chain ?? tee).write(line.endsWith("\n") ? line : `${line}\n`);
  return { logger, target: base.describe, health, secrets, records, writeLine, flush };
}

let stampedMs = -1;
let stamp = "";
/** pino's isoTime, formatted once per millisecond: under load many records share one. */
function isoTime(): string {
  const now = Date.now();
  if (now !== stampedMs) {
    stampedMs = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/** The log file's lock (its folder made first, 0700 where missing); none for a device, FIFO or descriptor path. */
function lockLog(file: string): WriterLock[] {
  if (descriptorOfPath(file) !== null) return [];
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new LogFileError(`--log-file ${file}: cannot write to it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const lock = lockLogFile(file, "--log-file");
  return lock ? [lock] : [];
}

/** A log file that cannot be opened is a configuration error: said at start, not discovered later. */
function openWriter(options: BatchWriterOptions): BatchWriter {
  if (!("file" in options.target)) return new BatchWriter(options);
  const { file } = options.target;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    return new BatchWriter(options);
  } catch (err) {
    if (err instanceof UsageError) throw new LogFileError(err.message);
    throw new LogFileError(`--log-file ${file}: cannot write to it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

function assertOpen(fd: number, file: string): void {
  try {
    fstatSync(fd);
  } catch {
    throw new LogFileError(`--log-file ${file}: descriptor ${fd} is not open in this process. Give a file, or a descriptor the shell opened.`);
  }
}

/**
 * `file`: the regular file written, when it is one (the audit chain keeps a state for it alone). A path that
 * names a descriptor (/dev/stdout) is written as that descriptor; a device, a FIFO or a socket as a stream,
 * never rotated (see BatchWriter).
 */
function writerDestination(opts: LogFileOptions, target: string, health: LogHealth, onWritten: () => void) {
  const fd = opts.file ? descriptorOfPath(opts.file) : (opts.fd ?? 1);
  const file = fd === null ? opts.file! : null;
  if (opts.file && fd !== null) assertOpen(fd, opts.file);
  const rotation = opts.maxSize ? { maxSize: opts.maxSize, keep: opts.keep ?? 5 } : null;
  const writer = openWriter({
    target: file ? { file } : { fd: fd! },
    ...(file && rotation),
    maxBufferedBytes: MAX_BUFFERED_BYTES,
    health,
    onWritten,
  });
  const stream = file ? writer.streamKind : opts.file ? "a stream" : null;
  const describe = stream
    ? `${target}, not rotated (${stream})`
    : file && rotation
      ? `${target} (rotated at ${rotation.maxSize} bytes, ${rotation.keep} kept)`
      : target;
  return { stream: writer as unknown as pino.DestinationStream, describe, flush: () => writer.close(), file: stream ? null : file };
}
