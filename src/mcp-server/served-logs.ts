import { lstat } from "node:fs/promises";
import { FileReadError, fileSpans, type FileSource } from "../saved-logs/follow.js";
import { ensureLogFolder, stdioLogFolder } from "../stdio/log-folder.js";
import { resolveLogInputs, watchForNewLogs, type LogInput } from "../ui/server/log-files.js";
import { UsageError } from "../util/usage-error.js";
import type { Segment } from "./log-segments.js";
import { RecordIndex } from "./record-index.js";

/**
 * The logs an `mcp` server serves: the files and folders given (none: the folder `mcp-wiretap stdio`
 * writes a log per launch into). Rotated files are read once, current ones followed like `tail -F`
 * (rotation and truncation included), and every folder is watched for new logs, as `mcp-wiretap ui` does.
 * Only these files are ever read: a tool never takes a path.
 */
export interface ServedLogs {
  index: RecordIndex;
  /** Every file read so far, in reading order (rotated files before their current file). */
  files(): string[];
  /** Resolves once what the files held at the start has been read. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface ServeLogsOptions {
  env?: NodeJS.ProcessEnv;
  onNote?: (message: string) => void;
  pollMs?: number;
  index?: RecordIndex;
}

export async function serveLogs(given: readonly string[], o: ServeLogsOptions = {}): Promise<ServedLogs> {
  const note = o.onNote ?? (() => undefined);
  const folders = given.length === 0 ? [stdioLogFolder(o.env)] : await foldersOf(given);
  if (given.length === 0) ensureLogFolder(folders[0]!);
  const paths = given.length === 0 ? folders : given;
  const inputs = await resolveLogInputs(paths, note).catch((err: NodeJS.ErrnoException) => {
    if (err instanceof FileReadError) throw new UsageError(err.message);
    throw new UsageError(`cannot read ${err.path ?? paths.join(" ")}: ${err.code ?? err.message}`);
  });
  if (inputs.length === 0 && given.length > 0 && folders.length === 0) throw new UsageError(`no *.ndjson log in ${given.join(" ")}`);
  const index = o.index ?? new RecordIndex();
  const files: string[] = inputs.map((i) => i.file);
  const stop = new AbortController();
  const caughtUp: Promise<void>[] = [];
  const readers: Promise<void>[] = [];

  const follow = (input: LogInput): Promise<void> => {
    let done: () => void = () => undefined;
    caughtUp.push(new Promise<void>((resolve) => (done = resolve)));
    const reading = (async () => {
      try {
        const spans = input.rotated ? fileSpans(input.file) : fileSpans(input.file, { follow: true, signal: stop.signal, onCaughtUp: done, onNotice: note, ...(o.pollMs ? { pollMs: o.pollMs } : {}) });
        let source: FileSource | null = null;
        let segment: Segment | null = null;
        for await (const span of spans) {
          if (span.source !== source) {
            source = span.source;
            segment = source === null ? null : await index.segmentOf(source);
          }
          index.append(span.line, input.file, segment === null ? undefined : { segment, offset: span.offset, bytes: span.bytes });
        }
      } catch (err) {
        note(`${input.file}: ${(err as Error).message}`);
      } finally {
        done();
      }
    })();
    return reading;
  };
  // Rotated files in order, each read to its end before the next begins, so records keep the log's order;
  // then the current files, followed. Nothing waits for this: `ready` says when it is done.
  const loading = (async () => {
    for (const input of inputs.filter((i) => i.rotated)) await follow(input);
    for (const input of inputs.filter((i) => !i.rotated)) readers.push(follow(input));
    await Promise.all(caughtUp);
  })();
  const known = new Set(files);
  for (const dir of folders) {
    readers.push(
      watchForNewLogs(dir, known, (file) => {
        files.push(file);
        return follow({ file, rotated: false });
      }, stop.signal, note),
    );
  }
  return {
    index,
    files: () => [...files],
    ready: loading,
    close: async () => {
      stop.abort();
      await loading.catch(() => undefined);
      await Promise.allSettled(readers);
      await index.close();
    },
  };
}

async function foldersOf(paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    const info = await lstat(p).catch(() => null);
    if (info?.isDirectory()) out.push(p);
  }
  return out;
}
