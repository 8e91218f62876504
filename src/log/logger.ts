import { mkdirSync } from "node:fs";
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
    base: undefined,
    timestamp: isoTime,
    formatters: { level: (label) => ({ level: label }) },
    messageKey: "msg",
    // Once per line, before the audit chain hashes it: no raw control, bidi or invisible character is written.
    hooks: { streamWrite: escapeLine },
  };
  const target = opts.stream ? "stream" : (opts.file ?? (opts.fd === 2 ? "stderr" : "stdout"));
  const health = new LogHealth(opts.onError ?? "pass", target);
  const logFile = opts.file && !opts.stream ? opts.file : null;
  // One writer per log: its lock first, then (the audit folder made) its audit state's.
  const locks: WriterLock[] = [];
  let audit: ReturnType<typeof prepareAuditChain> | null = null;
  let base: ReturnType<typeof writerDestination> | { stream: pino.DestinationStream; flush: () => Promise<void>; describe: string };
  try {
    if (logFile !== null) makeLogFolder(logFile);
    const logLock = logFile === null ? null : lockLogFile(logFile, "--log-file");
    if (logLock) locks.push(logLock);
    audit = opts.auditChain ? prepareAuditChain(opts.auditChain.dir, logFile) : null;
    const stateLock = logLock && opts.auditChain ? lockLogFile(statePathFor(opts.auditChain.dir, logFile!), "the audit state") : null;
    if (stateLock) locks.push(stateLock);
    base = opts.stream
      ? { stream: opts.stream as unknown as pino.DestinationStream, flush: async () => {}, describe: target }
      : writerDestination(opts, target, health, () => checkpoint());
  } catch (err) {
    for (const l of locks) l.release();
    throw err;
  }
  let chain: AuditChain | null = null;
  let saved = audit?.from?.seq ?? -1;
  // After each write that left nothing queued: the newest record handed over is in the file.
  const checkpoint = (): void => {
    const last = chain?.last;
    if (!audit?.state || !last || last.seq === saved) return;
    saved = last.seq;
    audit.state.save(last);
  };
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
    for (const l of locks) l.release();
  };
  return { logger, target: base.describe, health, secrets, records, flush };
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

/** The log's folder (and those above it), made 0700 where missing. */
function makeLogFolder(file: string): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new LogFileError(`--log-file ${file}: cannot write to it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** A log file that cannot be opened is a configuration error: said at start, not discovered later. */
function openWriter(options: BatchWriterOptions): BatchWriter {
  if (!("file" in options.target)) return new BatchWriter(options);
  const { file } = options.target;
  try {
    return new BatchWriter(options);
  } catch (err) {
    if (err instanceof UsageError) throw new LogFileError(err.message);
    throw new LogFileError(`--log-file ${file}: cannot write to it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

function writerDestination(opts: LogFileOptions, target: string, health: LogHealth, onWritten: () => void) {
  const file = opts.file;
  const rotation = file && opts.maxSize ? { maxSize: opts.maxSize, keep: opts.keep ?? 5 } : null;
  const writer = openWriter({
    target: file ? { file } : { fd: opts.fd ?? 1 },
    ...rotation,
    maxBufferedBytes: MAX_BUFFERED_BYTES,
    health,
    onWritten,
  });
  const describe = rotation ? `${target} (rotated at ${rotation.maxSize} bytes, ${rotation.keep} kept)` : target;
  return { stream: writer as unknown as pino.DestinationStream, describe, flush: () => writer.close() };
}
