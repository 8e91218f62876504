import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import pino, { type Logger } from "pino";
import { AuditChain } from "./audit-chain.js";
import { BatchWriter } from "./batch-writer.js";
import { escapeLine } from "./escape-line.js";
import { ExchangeSecrets } from "./exchange-secrets.js";
import { guardRecord } from "./record-guard.js";
import { LogHealth, type OnLogError } from "./log-health.js";
import { UsageError } from "../util/usage-error.js";

export type { Logger };

export interface LogSink {
  logger: Logger;
  /** Where records go, for the banner: a file path or "stdout". */
  target: string;
  health: LogHealth;
  /** Credentials of each exchange, removed by value from its records (register `secrets.addon()`). */
  secrets: ExchangeSecrets;
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
  const secrets = new ExchangeSecrets();
  const options: pino.LoggerOptions = {
    base: undefined,
    timestamp: isoTime,
    // Every record, whoever writes it, loses the credentials its exchange carried and secret-shaped values.
    formatters: { level: (label) => ({ level: label }), log: (record) => guardRecord(record, secrets) },
    messageKey: "msg",
    // Once per line, before the audit chain hashes it: no raw control, bidi or invisible character is written.
    hooks: { streamWrite: escapeLine },
  };
  if (opts.file) assertWritable(opts.file);
  const target = opts.stream ? "stream" : (opts.file ?? (opts.fd === 2 ? "stderr" : "stdout"));
  const health = new LogHealth(opts.onError ?? "pass", target);
  const base = opts.stream
    ? { stream: opts.stream as unknown as pino.DestinationStream, flush: async () => {}, describe: target }
    : writerDestination(opts, target, health);
  const stream = opts.auditChain ? new AuditChain(base.stream) : base.stream;
  const logger = pino(options, stream as pino.DestinationStream);
  return { logger, target: base.describe, health, secrets, flush: base.flush };
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
