import { watch, type FSWatcher } from "node:fs";
import { lstat, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { FileReadError, openLogFile } from "./log-inputs.js";
import { FileSpanSplitter, type LineSpan } from "./line-spans.js";
import { LineSplitter, streamLines } from "./reader.js";

export { FileReadError } from "./log-inputs.js";
export type { LineSpan } from "./line-spans.js";

export const DEFAULT_POLL_MS = 200;
const CHUNK_BYTES = 64 * 1024;

export interface FileLinesOptions {
  /** Keep reading as the file grows, like `tail -F` (default: stop at the end of the file). */
  follow?: boolean;
  /** How often the file is checked when following (ms); fs.watch only wakes the loop earlier. */
  pollMs?: number;
  /** Stops following (the generator returns). */
  signal?: AbortSignal;
  /** Rotation, truncation, waiting for the file: one sentence each, for stderr. */
  onNotice?: (message: string) => void;
  /** Called once, the first time everything in the file has been read. */
  onCaughtUp?: () => void;
}


/** A command's FILE argument: absent or "-" means standard input. */
export function isStdin(file: string | undefined): file is undefined | "-" {
  return file === undefined || file === "-";
}

/** The lines of FILE, or of `stdin` when FILE is absent or "-". */
export function inputLines(file: string | undefined, stdin: NodeJS.ReadableStream, opts?: FileLinesOptions): AsyncGenerator<string> {
  return isStdin(file) ? streamLines(stdin as AsyncIterable<Buffer | string>) : fileLines(file, opts);
}

/**
 * The lines of a file. With `follow`, keeps going like `tail -F`: new lines as they are appended; when the
 * name is given to another file (rotation by rename or replace: the inode changes), the rest of the old file
 * and then the new file from its start; when the file shrinks (truncated), again from its start. Polls every
 * `pollMs` (fs.watch on the folder, where available, only wakes it sooner), so a truncation followed by
 * growth past the old size within one interval is not noticed — the limitation `tail -F` has too.
 * Without `follow`, a missing or unreadable file is a FileReadError; with it, the name is waited for. A
 * symbolic link is never followed (O_NOFOLLOW): refused, or with `follow` waited on until a file has the name.
 */
export function fileLines(file: string, opts: FileLinesOptions = {}): AsyncGenerator<string> {
  return followFile(file, opts, new LineSplitter());
}

/** Which file (and which of its contents, counting truncations) the following bytes come from. */
export interface FileSource {
  file: string;
  dev: number;
  ino: number;
  /** How many times this file was seen truncated before these bytes were read. */
  truncations: number;
}

/** Cuts a file's bytes into items; `reset` says a file (or, after a truncation, its content) starts anew. */
export interface ChunkSplitter<T> {
  push(chunk: Buffer): T[];
  flush(): T[];
  reset(source?: FileSource): void;
}

/** `fileLines` with each line's place in its file: `FileSpanSplitter`'s spans. */
export function fileSpans(file: string, opts: FileLinesOptions = {}): AsyncGenerator<LineSpan> {
  return followFile(file, opts, new FileSpanSplitter());
}

/** The reading `fileLines` does, the bytes cut into items by `splitter`. */
async function* followFile<T>(file: string, opts: FileLinesOptions, splitter: ChunkSplitter<T>): AsyncGenerator<T> {
  const follow = opts.follow ?? false;
  const pollMs = Math.max(10, opts.pollMs ?? DEFAULT_POLL_MS);
  const notice = opts.onNotice ?? (() => undefined);
  let truncations = 0;
  const buffer = Buffer.alloc(CHUNK_BYTES);
  let handle: FileHandle | null = null;
  let identity: { dev: number; ino: number } | null = null;
  let position = 0;
  let caughtUp = false;
  let waitingNoticed = false;

  const wake = new Waker();
  let watcher: FSWatcher | null = null;
  if (follow) {
    try {
      const base = path.basename(file);
      watcher = watch(path.dirname(path.resolve(file)), { persistent: false }, (_event, name) => {
        if (name === null || name === base) wake.wake();
      });
      watcher.on("error", () => undefined);
    } catch {
      watcher = null; // no inotify here: polling alone
    }
  }
  const onAbort = (): void => wake.wake();
  opts.signal?.addEventListener("abort", onAbort);

  /** Reads what the open file has beyond `position`, a chunk at a time: its complete lines as they come. */
  let linesRead = 0;
  async function* readAvailable(): AsyncGenerator<T> {
    for (;;) {
      const { bytesRead } = await handle!.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      const lines = splitter.push(buffer.subarray(0, bytesRead));
      linesRead += lines.length;
      yield* lines;
    }
  }

  try {
    while (!opts.signal?.aborted) {
      if (handle === null) {
        try {
          // Opened again after a rotation, a log is a regular file: anything else put at its name (a FIFO would
          // hold the open, and a thread of the pool, until someone writes to it) is waited past.
          const again = identity !== null;
          handle = await openLogFile(file, again);
          const s = await handle.stat();
          if (again && !s.isFile()) throw new FileReadError(`${file} is no longer a regular file`);
          identity = { dev: s.dev, ino: s.ino };
          position = 0;
          truncations = 0;
          splitter.reset({ file, ...identity, truncations });
          if (waitingNoticed) notice(`${file} appeared; following it`);
          waitingNoticed = false;
        } catch (err) {
          await handle?.close().catch(() => undefined);
          handle = null;
          if (!follow) throw err instanceof FileReadError ? err : new FileReadError(`cannot read ${file}: ${(err as Error).message}`);
          if (!waitingNoticed) notice(`${file}: ${(err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file yet" : (err as Error).message}; waiting for it`);
          waitingNoticed = true;
          await wake.wait(pollMs);
          continue;
        }
      }
      const before = linesRead;
      yield* readAvailable();
      if (!follow) {
        yield* splitter.flush();
        return;
      }
      if (!caughtUp) {
        caughtUp = true;
        opts.onCaughtUp?.();
      }
      // Which file has the name now?
      let current: { dev: number; ino: number; size: number } | null = null;
      try {
        const s = await lstat(file);
        current = { dev: s.dev, ino: s.ino, size: s.size };
      } catch {
        current = null; // renamed away, not yet replaced: keep reading the old file meanwhile
      }
      if (current !== null && (current.dev !== identity!.dev || current.ino !== identity!.ino)) {
        // Rotated: the rest of the old file (a writer may still have appended to it), then the new one.
        yield* readAvailable();
        yield* splitter.flush();
        await handle.close().catch(() => undefined);
        handle = null;
        notice(`${file} was replaced; following the new file from its start`);
        continue;
      }
      if (current !== null && current.size < position) {
        notice(`${file} was truncated; reading it again from its start`);
        position = 0;
        splitter.reset({ file, ...identity!, truncations: ++truncations });
        continue;
      }
      if (linesRead === before) await wake.wait(pollMs);
    }
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    watcher?.close();
    wake.wake();
    await handle?.close().catch(() => undefined);
  }
}

/** A sleep that something else can cut short. */
class Waker {
  private pending: (() => void) | null = null;
  private woken = false;

  wait(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        self.pending = null;
        resolve();
      }
      this.pending = done;
    });
  }

  wake(): void {
    if (this.pending) this.pending();
    else this.woken = true;
  }
}
