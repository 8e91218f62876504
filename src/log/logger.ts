import { mkdirSync } from "node:fs";
import path from "node:path";
import pino, { type Logger } from "pino";
import { createStream } from "rotating-file-stream";

export type { Logger };

export interface LogSink {
  logger: Logger;
  /** Where records go, for the banner: a file path or "stdout". */
  target: string;
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
}

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
  if (opts.stream) return { logger: pino(options, opts.stream), target: "stream", flush: async () => {} };
  if (opts.file && opts.maxSize) return rotatingSink(options, opts.file, opts.maxSize, opts.keep ?? 5);
  if (opts.file) mkdirSync(path.dirname(opts.file), { recursive: true });
  const destination = pino.destination({ dest: opts.file ?? opts.fd ?? 1, sync: false, mkdir: true, mode: PRIVATE_FILE_MODE, minLength: 0 } as never);
  const logger = pino(options, destination);
  return {
    logger,
    target: opts.file ?? (opts.fd === 2 ? "stderr" : "stdout"),
    flush: () =>
      new Promise<void>((resolve) => {
        // Waits for the file to be open and every pending write to land (a record is never cut short).
        const flush = (): void => destination.flush(() => resolve());
        if ((destination as unknown as { fd: number }).fd < 0) destination.once("ready", flush);
        else flush();
      }),
  };
}

function rotatingSink(options: pino.LoggerOptions, file: string, maxSize: number, keep: number): LogSink {
  const dir = path.dirname(path.resolve(file));
  const base = path.basename(file);
  mkdirSync(dir, { recursive: true });
  // In logrotate mode the generator gets the rotation index (1 … keep) as its first argument, null for the live file.
  const name = (index: Date | number | null): string => (typeof index === "number" ? `${base}.${index}` : base);
  const stream = createStream(name as (time: Date | number | null) => string, {
    path: dir,
    size: `${maxSize}B`,
    rotate: keep,
    mode: PRIVATE_FILE_MODE,
  });
  const logger = pino(options, stream);
  return {
    logger,
    target: `${file} (rotated at ${maxSize} bytes, ${keep} kept)`,
    flush: () =>
      new Promise<void>((resolve) => {
        stream.end(() => resolve());
      }),
  };
}
