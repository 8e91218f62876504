import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, renameSync, writeSync } from "node:fs";
import { createPrivateFile, existsNoFollow, openPrivateAppend, replaceProblem, streamKindOf, type StreamKind } from "../util/private-file.js";
import type { LogHealth } from "./log-health.js";

export interface BatchWriterOptions {
  /**
   * A file (appended to, created 0600; a link or a file others can read is refused, see util/private-file)
   * or a file descriptor (stdout, stderr). A path naming a device, a FIFO or a socket is written as a stream.
   */
  target: { file: string } | { fd: number };
  /** Rotate past this many bytes, logrotate style (file → file.1 → … → file.keep). 0: never. Regular files only. */
  maxSize?: number;
  keep?: number;
  /** Bytes held while the target refuses writes (a full pipe); past them records are dropped and counted. */
  maxBufferedBytes: number;
  health: LogHealth;
  /** Called after a write put everything handed over so far into the target (the audit chain's checkpoint). */
  onWritten?: () => void;
}

/** A batch is written at once past this size, without waiting for the end of the event-loop turn. */
const EARLY_FLUSH_BYTES = 1024 * 1024;
const RETRY_MS = 5;

/** Writers still open: on a sudden exit (process.exit, an uncaught error) their last turn is written too. */
const liveWriters = new Set<BatchWriter>();
let exitHooked = false;
function writeAllAtExit(): void {
  for (const writer of liveWriters) writer.flushNow();
}

/**
 * Records of one event-loop turn written with one synchronous write, after the turn. A record is a few
 * hundred bytes and a local write into the page cache takes microseconds; an asynchronous write instead
 * costs a thread-pool round trip (two futex wake-ups and a loop wake-up) per batch, which under load cost
 * more than the write. Synchronous is also pino's own default destination mode.
 *
 * A write that fails (a full disk) is reported to `health` and its records are counted as dropped; a target
 * that is only busy (EAGAIN on a non-blocking pipe) keeps its records and is tried again shortly.
 */
export class BatchWriter {
  private fd: number;
  private size = 0;
  private queued: string[] = [];
  private queuedRecords = 0;
  private queuedChars = 0;
  /** The unwritten tail of a batch a busy target took only in part. */
  private carry: { bytes: Buffer; records: number } | null = null;
  private scheduled: NodeJS.Immediate | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;
  /** A failed write left part of a record in the target: the next write starts on a new line. */
  private torn = false;
  /** After a failed rotation, the size at which it is tried again (not at every write). */
  private rotateAt = 0;
  /** Set when the target is no regular file: then nothing is sized, rotated, renamed or replaced. */
  readonly streamKind: StreamKind | null = null;

  constructor(private readonly options: BatchWriterOptions) {
    const { target } = options;
    this.fd = "file" in target ? openPrivateAppend(target.file, "--log-file") : target.fd;
    if ("file" in target) {
      const info = fstatSync(this.fd);
      this.streamKind = streamKindOf(info);
      if (this.streamKind === null) {
        this.size = info.size;
        this.torn = endsMidLine(target.file, this.fd, this.size); // an earlier run cut off mid-record: start on a new line
      }
    }
    liveWriters.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", writeAllAtExit);
    }
  }

  /** pino calls this with one serialized record (newline included). Never throws. */
  write(record: string): boolean {
    if (this.closed) return true;
    if (this.queuedChars + (this.carry?.bytes.length ?? 0) + record.length > this.options.maxBufferedBytes) {
      this.options.health.droppedRecord();
      return true;
    }
    this.queued.push(record);
    this.queuedRecords++;
    this.queuedChars += record.length;
    if (this.queuedChars >= EARLY_FLUSH_BYTES) this.flushNow();
    else this.scheduled ??= setImmediate(() => this.flushNow());
    return true;
  }

  /** Writes whatever is queued, now. True when nothing is left waiting. */
  flushNow(): boolean {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    if (this.retry) return false; // a busy target: the timer tries again
    if (this.carry && !this.writeOut(this.carry.bytes, this.carry.records)) return false;
    this.carry = null;
    if (this.queued.length === 0) return true;
    if (this.torn) this.queued.unshift("\n");
    const batch = Buffer.from(this.queued.length === 1 ? this.queued[0]! : this.queued.join(""));
    const records = this.queuedRecords;
    this.queued = [];
    this.queuedRecords = 0;
    this.queuedChars = 0;
    return this.writeOut(batch, records);
  }

  /** Flushes, waiting out a busy target for at most `boundMs`; then the writer takes no more records. */
  async close(boundMs = 10_000): Promise<void> {
    for (const deadline = Date.now() + boundMs; !this.flushNow() && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      if (this.retry) clearTimeout(this.retry);
      this.retry = null;
    }
    this.closed = true;
    liveWriters.delete(this);
    if (this.retry) clearTimeout(this.retry);
    if ("file" in this.options.target) closeQuietly(this.fd);
  }

  private isStillAt(file: string): boolean {
    return sameFile(this.fd, file);
  }

  /** True when all of `bytes` is written or given up on (a failure); false when a busy target holds the rest. */
  private writeOut(bytes: Buffer, records: number): boolean {
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EAGAIN") {
        this.carry = { bytes: bytes.subarray(offset), records };
        this.retry = setTimeout(() => {
          this.retry = null;
          this.flushNow();
        }, RETRY_MS);
        return false;
      }
      this.options.health.lostRecords(records);
      this.options.health.failed(err as Error);
      if (offset > 0) this.torn = bytes[offset - 1] !== 0x0a;
      return true;
    }
    this.torn = false;
    this.options.health.recovered();
    const { maxSize, target } = this.options;
    if (maxSize && "file" in target && this.streamKind === null) {
      this.size += bytes.length;
      if (this.size >= Math.max(maxSize, this.rotateAt)) this.rotate(target.file, maxSize);
    }
    if (this.queued.length === 0 && this.carry === null) this.options.onWritten?.();
    return true;
  }

  /**
   * The names are shifted only while `file` is still the file being written: if something else took its place
   * (a link planted after an earlier rename), shifting would move it over our records. The new file is created
   * exclusively and never through a link; if that fails, records go on into the file already open. Only
   * regular files of our own are renamed or replaced: a link, a device or another user's file in one of the
   * rotated names stops the rotation (a warning; records go on into the file already open).
   */
  private rotate(file: string, maxSize: number): void {
    const keep = this.options.keep ?? 5;
    try {
      if (this.isStillAt(file)) {
        for (let i = 1; i <= keep; i++) {
          const problem = replaceProblem(`${file}.${i}`);
          if (problem) throw new Error(`${problem}, which is never renamed or replaced`);
        }
        for (let i = keep - 1; i >= 1; i--) if (existsNoFollow(`${file}.${i}`)) renameSync(`${file}.${i}`, `${file}.${i + 1}`);
        renameSync(file, `${file}.1`);
      }
      const next = createPrivateFile(file);
      closeQuietly(this.fd);
      this.fd = next;
      this.size = 0;
      this.rotateAt = 0;
    } catch (err) {
      // Records are still written (to the file as it is, or to the renamed one): a warning, not a failure.
      this.rotateAt = this.size + maxSize;
      this.options.health.rotationFailed(err as Error);
    }
  }
}

/** Read through a second descriptor (ours is write-only), checked to be the same file. */
function endsMidLine(file: string, fd: number, size: number): boolean {
  if (size === 0 || !fstatSync(fd).isFile()) return false;
  let reader: number | null = null;
  try {
    reader = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const last = Buffer.alloc(1);
    return sameInode(reader, fd) && readSync(reader, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
  } catch {
    return false;
  } finally {
    if (reader !== null) closeQuietly(reader);
  }
}

function sameInode(a: number, b: number): boolean {
  const x = fstatSync(a);
  const y = fstatSync(b);
  return x.dev === y.dev && x.ino === y.ino;
}

/** True when `file` is the very file (device and inode) that `fd` writes to. */
function sameFile(fd: number, file: string): boolean {
  try {
    const open = fstatSync(fd);
    const named = lstatSync(file);
    return open.dev === named.dev && open.ino === named.ino;
  } catch {
    return false;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed or never fully opened: nothing left to release.
  }
}
