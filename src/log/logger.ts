import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import pino, { type Logger } from "pino";

export type { Logger };

export interface LogSink {
  logger: Logger;
  /** Where records go, for the banner: a file path or "stdout". */
  target: string;
  /** Writes out everything buffered; call before exit. */
  flush(): Promise<void>;
}

/**
 * One NDJSON record per line (pino). Log files are created 0600: they describe the traffic of every
 * MCP client that uses the proxy.
 */
export function createLogSink(file: string | undefined, stream?: NodeJS.WritableStream): LogSink {
  const options: pino.LoggerOptions = {
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    messageKey: "msg",
  };
  if (stream) return { logger: pino(options, stream), target: "stream", flush: async () => {} };
  if (file) mkdirSync(dirname(file), { recursive: true });
  const destination = pino.destination({ dest: file ?? 1, sync: false, mkdir: true, mode: 0o600, minLength: 0 } as never);
  const logger = pino(options, destination);
  return {
    logger,
    target: file ?? "stdout",
    flush: () =>
      new Promise<void>((resolve) => {
        try {
          destination.flushSync();
        } catch {
          // nothing buffered, or the destination is not ready yet: flush on ready below
        }
        resolve();
      }),
  };
}
