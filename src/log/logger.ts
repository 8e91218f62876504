import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import pino, { type Logger } from "pino";
import { AuditChain } from "./audit-chain.js";
import { BatchWriter } from "./batch-writer.js";
import { LogHealth, type OnLogError } from "./log-health.js";
import { UsageError } from "../util/usage-error.js";
import { RecordStream, teeToRecordStream } from "../records/record-stream.js";

export type { Logger };

export interface LogSink {
  logger: Logger;
  /** Where records go, for the banner: a file path or "stdout". */
  target: string;
  health: LogHealth;
  /** Every record line as written, for subscribers (the web UI feed); see records/record-stream.ts. */
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
  /** Chain every record to the one before it (`seq`, `prevHash`). */
  auditChain?: boolean;
  onError?: OnLogError;
}

export class LogFileError extends UsageError {}

/** Bound on records held in memory while the destination cannot keep up (or fails): past it they are dropped and counted. */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
const PRIVATE_FILE_MODE = 0o600;

/**
 * One NDJSON record per line (pino). Log files are created 0600: they describe the traffic of every
 * MCP client that uses the proxy.
 */
export function createLogSink(opts: LogFileOptions = {}): LogSink {
  const options: pino.LoggerOptions = {
    base: undefined,
    timestamp: isoTime,
    formatters: { level: (label) => ({ level: label }) },
    messageKey: "msg",
  };
  if (opts.file) assertWritable(opts.file);
  const target = opts.stream ? "stream" : (opts.file ?? (opts.fd === 2 ? "stderr" : "stdout"));
  const health = new LogHealth(opts.onError ?? "pass", target);
  const base = opts.stream
    ? { stream: opts.stream as unknown as pino.DestinationStream, flush: async () => {}, describe: target }
    : writerDestination(opts, target, health);
  // The tee sits after the audit chain: subscribers see each line exactly as written.
  const records = new RecordStream();
  const tee = teeToRecordStream(base.stream as unknown as { write(chunk: string): unknown }, records);
  const stream = opts.auditChain ? new AuditChain(tee) : tee;
  const logger = pino(options, stream as pino.DestinationStream);
  records.setDropReporter((r) => logger.warn({ event: "record_stream_drops", ...r }));
  const flush = async (): Promise<void> => {
    records.close();
    await base.flush();
  };
  return { logger, target: base.describe, health, records, flush };
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

/** A log file that cannot be opened is a configuration error: said at start, not discovered later. */
function assertWritable(file: string): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
  } catch (err) {
    throw new LogFileError(`--log-file ${file}: cannot write to it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

function writerDestination(opts: LogFileOptions, target: string, health: LogHealth) {
  const file = opts.file;
  const rotation = file && opts.maxSize ? { maxSize: opts.maxSize, keep: opts.keep ?? 5 } : null;
  const writer = new BatchWriter({
    target: file ? { file } : { fd: opts.fd ?? 1 },
    ...rotation,
    maxBufferedBytes: MAX_BUFFERED_BYTES,
    health,
  });
  const describe = rotation ? `${target} (rotated at ${rotation.maxSize} bytes, ${rotation.keep} kept)` : target;
  return { stream: writer as unknown as pino.DestinationStream, describe, flush: () => writer.close() };
}
