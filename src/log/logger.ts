import { closeSync, mkdirSync, openSync } from "node:fs";
import path from "node:path";
import pino, { type Logger } from "pino";
import { createStream } from "rotating-file-stream";
import { AuditChain } from "./audit-chain.js";
import { LogHealth, type OnLogError } from "./log-health.js";
import { UsageError } from "../util/usage-error.js";

export type { Logger };

export interface LogSink {
  logger: Logger;
  /** Where records go, for the banner: a file path or "stdout". */
  target: string;
  health: LogHealth;
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
const MAX_WRITE_BYTES = 1024 * 1024;

const PRIVATE_FILE_MODE = 0o600;

/**
 * One NDJSON record per line (pino). Log files are created 0600: they describe the traffic of every
 * MCP client that uses the proxy.
 */
export function createLogSink(opts: LogFileOptions = {}): LogSink {
  const options: pino.LoggerOptions = {
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    messageKey: "msg",
  };
  if (opts.file) assertWritable(opts.file);
  const target = opts.stream ? "stream" : (opts.file ?? (opts.fd === 2 ? "stderr" : "stdout"));
  const health = new LogHealth(opts.onError ?? "pass", target);
  const base = opts.stream
    ? { stream: opts.stream as unknown as pino.DestinationStream, flush: async () => {}, describe: target }
    : opts.file && opts.maxSize
      ? rotatingDestination(opts.file, opts.maxSize, opts.keep ?? 5, health)
      : fileDestination(opts, health);
  const stream = opts.auditChain ? new AuditChain(base.stream) : base.stream;
  const logger = pino(options, stream as pino.DestinationStream);
  return { logger, target: base.describe, health, flush: base.flush };
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

function fileDestination(opts: LogFileOptions, health: LogHealth) {
  const destination = pino.destination({
    dest: opts.file ?? opts.fd ?? 1,
    sync: false,
    mkdir: true,
    mode: PRIVATE_FILE_MODE,
    minLength: 0,
    // Large writes: under load one write call carries many records (the default 16 KiB cannot keep up with
    // thousands of records a second while the event loop is busy forwarding).
    maxWrite: MAX_WRITE_BYTES,
    maxLength: MAX_BUFFERED_BYTES,
  } as never);
  destination.on("error", (err: Error) => health.failed(err));
  destination.on("write", () => health.recovered());
  destination.on("drop", () => health.droppedRecord());
  return {
    stream: destination as pino.DestinationStream,
    describe: opts.file ?? (opts.fd === 2 ? "stderr" : "stdout"),
    flush: () => drained(destination as unknown as SonicBoomState),
  };
}

interface SonicBoomState extends NodeJS.EventEmitter {
  fd: number;
  _writing: boolean;
  _len: number;
}

/**
 * Resolves once every record handed to the destination is written (sonic-boom's own flush() calls back at
 * once when minLength is 0), or it failed, or after a bound: shutdown must not hang on a broken disk.
 */
function drained(d: SonicBoomState, boundMs = 10_000): Promise<void> {
  return new Promise((resolve) => {
    const idle = (): boolean => d.fd >= 0 && !d._writing && d._len === 0;
    if (idle()) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      d.off("write", check);
      d.off("ready", check);
      d.off("error", done);
      resolve();
    };
    // "write" is emitted before sonic-boom updates its counters: look again once it has.
    const check = (): void => {
      setImmediate(() => idle() && done());
    };
    const timer = setTimeout(done, boundMs);
    d.on("write", check);
    d.on("ready", check);
    d.once("error", done);
  });
}

function rotatingDestination(file: string, maxSize: number, keep: number, health: LogHealth) {
  const dir = path.dirname(path.resolve(file));
  const base = path.basename(file);
  // In logrotate mode the generator gets the rotation index (1 … keep) as its first argument, null for the live file.
  const name = (index: Date | number | null): string => (typeof index === "number" ? `${base}.${index}` : base);
  const stream = createStream(name as (time: Date | number | null) => string, {
    path: dir,
    size: `${maxSize}B`,
    rotate: keep,
    mode: PRIVATE_FILE_MODE,
  });
  stream.on("error", (err: Error) => health.failed(err));
  const guarded = {
    write(chunk: string): boolean {
      if (stream.writableLength > MAX_BUFFERED_BYTES) {
        health.droppedRecord();
        return true;
      }
      return stream.write(chunk, (err) => (err ? health.failed(err) : health.recovered()));
    },
  };
  return {
    stream: guarded as unknown as pino.DestinationStream,
    describe: `${file} (rotated at ${maxSize} bytes, ${keep} kept)`,
    flush: () => new Promise<void>((resolve) => stream.end(() => resolve())),
  };
}
