/**
 * Files and folders that hold what other users of the machine must not read or change: the CA key, log
 * and key-log files, the audit key and state, the pin store.
 *
 * The rules, the same for every such file:
 * - a file we create is 0600 from the start (O_CREAT with the mode, or a temporary file renamed in place);
 *   a folder we create is 0700;
 * - the last component of a path is never followed when it is a symbolic link (O_NOFOLLOW): a link that
 *   another user planted in a shared folder would redirect our writes to a file of their choosing;
 * - an existing file is used only if it is a regular file of our own user that nobody else can read or
 *   write; otherwise we refuse with what is wrong and what to do. We never chmod a file or folder we did not
 *   create: its looser mode may have been on purpose, and what it held may already have been read;
 * - a character device (/dev/null) is taken as it is; a FIFO is held to the rules of a file;
 * - an existing folder must be ours and not writable by others (a shared 1777 folder is refused); one
 *   that others can only list (0755) is accepted as it is, since every file in it is 0600 by itself.
 *
 * File modes and owners mean little on Windows: the checks are skipped there.
 */
// fs.promises is read where it is used: node:fs/promises loads readline and streams, which a `stdio` launch
// would load before it starts its server (scripts/build-cli.mjs).
import fs, { chmodSync, closeSync, constants, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, writeSync, type Stats } from "node:fs";
import path from "node:path";
import { UsageError } from "./usage-error.js";

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;
const posix = process.platform !== "win32";
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
// O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader, for ever if it was planted;
// with it the open fails (ENXIO) instead. It changes nothing for regular files; writers handle EAGAIN.
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | O_NOFOLLOW | (constants.O_NONBLOCK ?? 0);

/** A private file or folder that cannot be used as it is; the message says why and what to do. */
export class PrivateFileError extends UsageError {
  constructor(
    message: string,
    readonly problem: FileProblem["kind"] | "symlink",
  ) {
    super(message);
  }
}

export type FileProblem =
  | { kind: "not_regular" | "not_folder" }
  | { kind: "other_owner"; uid: number }
  | { kind: "readable_by_others" | "writable_by_others"; mode: number };

/**
 * What makes an existing file (or folder) unfit for private data, or null. `secret`: others may not even
 * read it (a key, a log); otherwise they may read but not write it (a certificate).
 */
export function privacyProblem(info: Stats, opts: { folder?: boolean; secret?: boolean; allowDevices?: boolean } = {}): FileProblem | null {
  // Only root makes device nodes, so /dev/null or /dev/full are safe whoever owns them; a FIFO or a socket
  // can be planted by anyone and is held to the rules of a file (a reader at the other end gets everything).
  if (!opts.folder && opts.allowDevices && info.isCharacterDevice()) return null;
  const pipe = !opts.folder && opts.allowDevices && (info.isFIFO() || info.isSocket());
  if (opts.folder ? !info.isDirectory() : !info.isFile() && !pipe) return { kind: opts.folder ? "not_folder" : "not_regular" };
  if (!posix) return null;
  const me = process.getuid?.();
  if (me !== undefined && info.uid !== me) return { kind: "other_owner", uid: info.uid };
  if ((info.mode & 0o022) !== 0) return { kind: "writable_by_others", mode: info.mode };
  if (opts.secret && !opts.folder && (info.mode & 0o077) !== 0) return { kind: "readable_by_others", mode: info.mode };
  return null;
}

/** The message for a problem; `what` names the setting or the role, e.g. "--log-file" or "the CA key". */
export function problemMessage(problem: FileProblem, what: string, file: string): string {
  switch (problem.kind) {
    case "not_regular":
      return `${what} ${file} is not a regular file. Choose another path.`;
    case "not_folder":
      return `${what} ${file} exists but is not a folder. Move it away or choose another path.`;
    case "other_owner":
      return (
        `${what} ${file} belongs to another user (uid ${problem.uid}; you are uid ${process.getuid?.()}): ` +
        `mcp-wiretap keeps private data only in files and folders of its own user. Choose another path.`
      );
    case "writable_by_others":
    case "readable_by_others": {
      const can = problem.kind === "writable_by_others" ? "write to" : "read";
      return (
        `${what} ${file} has mode ${octal(problem.mode)}: other users can ${can} it. If nobody else should ` +
        `have, run \`chmod 600 ${shellQuote(file)}\`; otherwise move it away (or choose another path) and a new ` +
        `one is created with mode 0600.`
      );
    }
  }
}

export function symlinkMessage(what: string, file: string): string {
  return (
    `${what} ${file} is a symbolic link. mcp-wiretap does not follow links to files it reads or writes ` +
    `(a link planted by another user would redirect them): give the path of the file itself, or remove the link.`
  );
}

/**
 * Opens `file` for appending, creating it 0600; refuses a symbolic link and an existing file that is not
 * private (see above). Character devices and pipes (/dev/null, a FIFO) are taken as they are.
 */
export function openPrivateAppend(file: string, what: string): number {
  return openChecked(file, APPEND, what);
}

/** Opens `file` for writing in place (not appending), with the same rules as openPrivateAppend. */
export function openPrivateWrite(file: string, what: string): number {
  return openChecked(file, constants.O_WRONLY | constants.O_CREAT | O_NOFOLLOW, what, { allowDevices: false });
}

/** Creates `file` (0600) for appending; fails with EEXIST if anything, a link included, is already there. */
export function createPrivateFile(file: string): number {
  return openSync(file, APPEND | constants.O_EXCL, PRIVATE_FILE_MODE);
}

/** Reads a private file, or null when it does not exist. `secret`: others may not even read it. */
export function readPrivateFile(file: string, what: string, opts: { secret?: boolean } = {}): string | null {
  let fd: number;
  try {
    fd = openChecked(file, constants.O_RDONLY | O_NOFOLLOW, what, { secret: opts.secret ?? true, allowDevices: false });
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
  try {
    const chunks: Buffer[] = [];
    const chunk = Buffer.alloc(64 * 1024);
    for (let n; (n = readSync(fd, chunk, 0, chunk.length, null)) > 0; ) chunks.push(Buffer.from(chunk.subarray(0, n)));
    return Buffer.concat(chunks).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

function openChecked(file: string, flags: number, what: string, opts: { secret?: boolean; allowDevices?: boolean } = {}): number {
  let fd: number;
  try {
    fd = openSync(file, flags, PRIVATE_FILE_MODE);
  } catch (error) {
    if (isSymlinkRefusal(error, file)) throw new PrivateFileError(symlinkMessage(what, file), "symlink");
    throw error;
  }
  const problem = privacyProblem(fstatSync(fd), { secret: opts.secret ?? true, allowDevices: opts.allowDevices ?? true });
  if (problem) {
    closeSync(fd);
    throw new PrivateFileError(problemMessage(problem, what, file), problem.kind);
  }
  return fd;
}

/** O_NOFOLLOW on a link fails with ELOOP (Linux, macOS) or EMLINK (FreeBSD). */
function isSymlinkRefusal(error: unknown, file: string): boolean {
  const code = errorCode(error);
  if (code !== "ELOOP" && code !== "EMLINK") return false;
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Makes sure `dir` is a private folder: creates it (and missing parents) with mode 0700, or checks that an
 * existing one is a folder of our own that others cannot write to. An existing folder is never chmod-ed.
 * A symbolic link to a folder is accepted only when the link itself is ours.
 */
export function ensurePrivateDir(dir: string, what: string): { created: boolean } {
  mkdirSync(path.dirname(dir), { recursive: true, mode: PRIVATE_DIR_MODE });
  let created = true;
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
    created = false;
  }
  if (created) {
    // The umask may have removed some of the owner's own bits from the folder just made.
    if (posix && (statSync(dir).mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(dir, PRIVATE_DIR_MODE);
    return { created };
  }
  const link = lstatSync(dir);
  if (link.isSymbolicLink() && posix && link.uid !== process.getuid?.()) {
    throw new PrivateFileError(`${symlinkMessage(what, dir)} (The link belongs to uid ${link.uid}, not to you.)`, "symlink");
  }
  const problem = privacyProblem(statSync(dir), { folder: true });
  if (problem?.kind === "writable_by_others") {
    throw new PrivateFileError(
      `${what} ${dir} has mode ${octal(problem.mode)}: other users can write to it, so they could replace or plant ` +
        `files in it. mcp-wiretap does not change the mode of a folder it did not create: choose a private folder ` +
        `of your own (a new one is created with mode 0700).`,
      problem.kind,
    );
  }
  if (problem) throw new PrivateFileError(problemMessage(problem, what, dir), problem.kind);
  return { created };
}

/**
 * A new name beside `file` for its next version. node:crypto is taken when first needed: this module is
 * loaded at every launch (the compile cache's folder), and crypto's modules are a good part of the time a
 * `stdio` launch takes to start its server.
 */
function tempNameBeside(file: string): string {
  const { randomBytes } = process.getBuiltinModule("node:crypto");
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString("hex")}.tmp`);
}

/**
 * Writes `data` to `file` through a temporary file in the same folder, created (O_EXCL) with `mode` from the
 * start, so a secret is never readable by others, not even briefly; rename() replaces a link rather than
 * following it. With `exclusive`, the file is put in place only if nothing is there yet, and the result
 * says whether it was; otherwise an existing file is replaced. Readers see the old file or the whole new one.
 */
export async function writeFileAtomic(file: string, data: string, mode = PRIVATE_FILE_MODE, options: { exclusive?: boolean } = {}): Promise<boolean> {
  const temp = tempNameBeside(file);
  try {
    const handle = await fs.promises.open(temp, "wx", mode);
    try {
      await handle.chmod(mode); // our own new file: the umask may have cleared bits we want (0644)
      await handle.writeFile(data, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    let placed = true;
    if (options.exclusive) placed = await linkIfAbsent(temp, file);
    else await fs.promises.rename(temp, file);
    if (placed) await syncFolder(path.dirname(file));
    return placed;
  } finally {
    await fs.promises.unlink(temp).catch(() => undefined); // after link() or a failure; already gone after rename()
  }
}

/** writeFileAtomic without `exclusive`, for synchronous callers (the pin store, rewritten while a message waits). */
export function writeFileAtomicSync(file: string, data: string, mode = PRIVATE_FILE_MODE): void {
  const temp = tempNameBeside(file);
  try {
    const fd = openSync(temp, "wx", mode);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } finally {
    rmSync(temp, { force: true }); // after a failure; already gone after renameSync()
  }
}

/** Makes the new directory entry itself survive a crash. Not possible everywhere (Windows): best effort. */
async function syncFolder(dir: string): Promise<void> {
  try {
    const handle = await fs.promises.open(dir, "r");
    await handle.sync().finally(() => handle.close());
  } catch {
    // the file's data is synced already; at worst a crash right now loses the new name
  }
}

// link() fails with EEXIST instead of replacing (a link included), which is what makes creating a file safe
// against a second process doing the same at the same moment. Some file systems have no hard links.
async function linkIfAbsent(temp: string, file: string): Promise<boolean> {
  try {
    await fs.promises.link(temp, file);
    return true;
  } catch (error) {
    const code = errorCode(error);
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
  }
  if (existsNoFollow(file)) return false;
  await fs.promises.rename(temp, file);
  return true;
}

/**
 * The descriptor a path names when it is one of the links to an open descriptor: `/dev/stdout`,
 * `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N` (what a shell's `>(cmd)` gives). Written to as the descriptor
 * itself: following such a link by name would be following a link, and replacing it would replace the link.
 */
export function descriptorOfPath(file: string): number | null {
  if (file === "/dev/stdout") return 1;
  if (file === "/dev/stderr") return 2;
  const fd = /^\/(?:dev|proc\/self)\/fd\/([1-9]\d{0,5})$/.exec(file)?.[1];
  return fd === undefined ? null : Number(fd);
}

export type StreamKind = "a device" | "a FIFO" | "a socket";

/**
 * What is not a regular file is a stream: written to as it comes, never sized, rotated, renamed, truncated
 * or replaced (renaming /dev/null because its "file" grew would take it from every program on the machine).
 */
export function streamKindOf(info: Stats): StreamKind | null {
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  return null;
}

/**
 * Why the entry at `file` may not be renamed, replaced or deleted by us, or null when it may (absent, or a
 * regular file of our own). Links are not followed.
 */
export function replaceProblem(file: string): string | null {
  let info: Stats;
  try {
    info = lstatSync(file);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    return `${file} cannot be examined (${errorCode(error) ?? String(error)})`;
  }
  if (info.isSymbolicLink()) return `${file} is a symbolic link`;
  const stream = streamKindOf(info);
  if (stream) return `${file} is ${stream}`;
  if (!info.isFile()) return `${file} is not a regular file`;
  const me = posix ? process.getuid?.() : undefined;
  if (me !== undefined && info.uid !== me) return `${file} belongs to another user (uid ${info.uid})`;
  return null;
}

export function existsNoFollow(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

export function octal(mode: number): string {
  return "0" + (mode & 0o7777).toString(8).padStart(3, "0");
}

export function shellQuote(file: string): string {
  return /^[\w./-]+$/.test(file) ? file : `'${file.replace(/'/g, `'\\''`)}'`;
}
