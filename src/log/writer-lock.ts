import { closeSync, constants, lstatSync, openSync, readSync, realpathSync, unlinkSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { UsageError } from "../util/usage-error.js";

/**
 * One writer per log: two proxies (or stdio launches) appending to one file interleave their records, and
 * with --audit-chain each numbers and chains its own, so the log then fails `verify-log`. The writer holds
 * `<file>.lock` (created exclusively, 0600, never through a link) holding its pid and host, removed when
 * it stops. Node has no flock(2); a lock file left by a writer that died (same host, pid gone) is taken over.
 * Devices and FIFOs (/dev/null, a pipe) are streams, not logs: they are never locked.
 */
export class LogInUseError extends UsageError {}

export interface WriterLock {
  release(): void;
}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const MAX_LOCK_BYTES = 512;

/** Takes the lock of `file` for this process, or throws LogInUseError saying what to do; null when `file` is not a regular file. */
export function lockLogFile(file: string, what: string): WriterLock | null {
  const target = canonical(file);
  if (target === null) return null;
  const lock = `${target}.lock`;
  const mine = `${process.pid}\n${os.hostname()}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new LogInUseError(`${what} ${file}: cannot create its lock ${lock} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      const holder = readHolder(lock);
      if (holder !== null && holder.host === os.hostname() && holder.pid !== process.pid && !alive(holder.pid)) {
        // Left by a writer that died: taken over.
        unlinkQuietly(lock);
        continue;
      }
      const who = holder === null ? "another writer" : `another mcp-wiretap (pid ${holder.pid}${holder.host === os.hostname() ? "" : ` on ${holder.host}`})`;
      throw new LogInUseError(
        `${what} ${file} is in use by ${who}: two writers would interleave their records. Give each proxy or stdio ` +
          `launch its own log file, or stop the other one. If none is running, remove ${lock}.`,
      );
    }
    try {
      writeSync(fd, mine);
    } finally {
      closeSync(fd);
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const holder = readHolder(lock);
        if (holder?.pid === process.pid) unlinkQuietly(lock);
      },
    };
  }
  throw new LogInUseError(`${what} ${file}: its lock ${lock} keeps coming back; remove it if no other mcp-wiretap writes this log`);
}

/** The file's path with its folder's links resolved (two spellings of one log take one lock); null for a device, FIFO, socket or link. */
function canonical(file: string): string | null {
  const resolved = path.resolve(file);
  try {
    const info = lstatSync(resolved);
    // A link is refused by the writer itself (util/private-file), with its own message.
    if (!info.isFile()) return null;
  } catch {
    // Not there yet: it will be created as a regular file.
  }
  try {
    return path.join(realpathSync(path.dirname(resolved)), path.basename(resolved));
  } catch {
    return resolved;
  }
}

function readHolder(lock: string): { pid: number; host: string } | null {
  let fd: number;
  try {
    fd = openSync(lock, constants.O_RDONLY | O_NOFOLLOW | (constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(MAX_LOCK_BYTES);
    const text = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString("utf8");
    const [pid, host] = text.split("\n");
    return pid !== undefined && /^\d+$/.test(pid) && host !== undefined ? { pid: Number(pid), host } : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}
