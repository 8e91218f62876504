import { readSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import type { FileSource } from "../saved-logs/follow.js";
import { openLogFile } from "../saved-logs/log-inputs.js";

/** Open files kept at most: past it the least recently read is closed, and opened again by name when needed. */
export const MAX_OPEN_SEGMENTS = 32;

/**
 * One content of one served file (a truncation starts a new one): what records are read again from. The
 * file is opened when its first record is held, so that records of a file rotated away (renamed or
 * deleted) stay readable while held; opened again by name only when it is still the same file (device and
 * inode), never through a link.
 */
export class Segment {
  handle: FileHandle | null = null;
  /** Why its records can no longer be read, once that is known. */
  gone: string | null = null;
  /** Held records that point into it: at 0 the file is closed. */
  held = 0;
  lastUsed = 0;

  constructor(readonly source: FileSource) {}

  get file(): string {
    return this.source.file;
  }
}

export class SegmentFiles {
  private readonly open = new Set<Segment>();
  private clock = 0;

  /** Opens the segment's file now (a rotation may soon take its name away). */
  async attach(segment: Segment): Promise<void> {
    await this.handleOf(segment);
  }

  /** `length` bytes at `offset` of the segment's file into `into`, or why they cannot be read. */
  async read(segment: Segment, offset: number, length: number, into: Buffer = Buffer.allocUnsafe(length)): Promise<Buffer | string> {
    return this.readWith(segment, offset, length, into, async (handle, at, want, from) => (await handle.read(into, at, want, from)).bytesRead);
  }

  /**
   * `read`, the bytes read at once rather than through the thread pool: a search reads a file a block at a
   * time, and a round trip through the pool per block took longer than the read itself on a busy machine.
   * Only the opening (once per file) waits for the pool.
   */
  async readNow(segment: Segment, offset: number, length: number, into: Buffer): Promise<Buffer | string> {
    return this.readWith(segment, offset, length, into, (handle, at, want, from) => readSync(handle.fd, into, at, want, from));
  }

  private async readWith(
    segment: Segment,
    offset: number,
    length: number,
    into: Buffer,
    readInto: (handle: FileHandle, at: number, want: number, from: number) => number | Promise<number>,
  ): Promise<Buffer | string> {
    for (let attempt = 0; ; attempt++) {
      const handle = await this.handleOf(segment);
      if (handle === null) return segment.gone ?? `${segment.file}: cannot be read again`;
      try {
        let done = 0;
        while (done < length) {
          const bytesRead = await readInto(handle, done, length - done, offset + done);
          if (bytesRead === 0) return `${segment.file} is shorter than when it was read (truncated): the record's text is gone`;
          done += bytesRead;
        }
        return into.subarray(0, length);
      } catch (err) {
        // Closed under this read to keep within MAX_OPEN_SEGMENTS: opened again once.
        if (segment.handle !== handle && attempt === 0) continue;
        return `${segment.file}: ${(err as Error).message}`;
      }
    }
  }

  /** The segment's records point at content no longer there (the file was truncated). */
  retire(segment: Segment, why: string): void {
    segment.gone ??= why;
    void this.close(segment);
  }

  /** A segment none of whose records is held any more. */
  release(segment: Segment): void {
    if (segment.held === 0) void this.close(segment);
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((s) => this.close(s)));
  }

  private async handleOf(segment: Segment): Promise<FileHandle | null> {
    segment.lastUsed = ++this.clock;
    if (segment.handle !== null) return segment.handle;
    if (segment.gone !== null) return null;
    let handle: FileHandle;
    try {
      handle = await openLogFile(segment.file, true);
    } catch (err) {
      segment.gone = `${segment.file} cannot be opened again (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): rotated away or removed`;
      return null;
    }
    const s = await handle.stat().catch(() => null);
    if (s === null || s.dev !== segment.source.dev || s.ino !== segment.source.ino) {
      await handle.close().catch(() => undefined);
      segment.gone = `${segment.file} is now another file (rotated or replaced): the records read from the old one are no longer readable`;
      return null;
    }
    if (segment.handle !== null) {
      // Another read opened it meanwhile.
      await handle.close().catch(() => undefined);
      return segment.handle;
    }
    segment.handle = handle;
    this.open.add(segment);
    if (this.open.size > MAX_OPEN_SEGMENTS) {
      let oldest: Segment | null = null;
      for (const s of this.open) if (s !== segment && (oldest === null || s.lastUsed < oldest.lastUsed)) oldest = s;
      if (oldest) void this.close(oldest);
    }
    return handle;
  }

  private async close(segment: Segment): Promise<void> {
    const handle = segment.handle;
    segment.handle = null;
    this.open.delete(segment);
    await handle?.close().catch(() => undefined);
  }
}
