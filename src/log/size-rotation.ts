import { renameSync, statSync } from "node:fs";

/** What rotation needs of the destination: its write events, and a way to start a new file under the same name. */
export interface ReopenableDestination {
  on(event: "write", listener: (bytes: number) => void): unknown;
  reopen(): void;
}

/**
 * logrotate-style rotation by size: once `maxSize` bytes are on disk, `file` becomes `file.1` (`file.1`
 * becomes `file.2`, …, the oldest past `keep` is replaced) and the destination reopens `file` afresh.
 * Renaming never loses a record: a write already under way lands in the renamed file, anything still
 * buffered goes to the new one, in order.
 */
export function rotateBySize(
  destination: ReopenableDestination,
  file: string,
  maxSize: number,
  keep: number,
  failed: (err: Error) => void,
): void {
  let size = sizeOf(file);
  destination.on("write", (bytes) => {
    size += bytes;
    if (size < maxSize) return;
    try {
      for (let i = keep - 1; i >= 1; i--) renameIfPresent(`${file}.${i}`, `${file}.${i + 1}`);
      renameSync(file, `${file}.1`);
    } catch (err) {
      // Keep writing to the file we have: a full or read-only folder must not cost records.
      failed(err as Error);
      size = 0;
      return;
    }
    size = 0;
    destination.reopen();
  });
}

function renameIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
