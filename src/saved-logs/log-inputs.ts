import { constants, type Stats } from "node:fs";
import { lstat, open, readdir, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { octal, symlinkMessage } from "../util/private-file.js";

/**
 * How the readers (tail, stats, check, diff, export, ui, verify-log) reach a log: as the writers do, they
 * never follow a symbolic link — a link planted in a log folder by another user would make them read (and
 * show, or export) a file of that user's choosing. A FILE that is a link is refused; a link inside a folder
 * is skipped, with a note; a folder other users can write to gets a warning (they could plant files in it).
 */
export class FileReadError extends Error {}

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/** A reader's notes (links skipped, folders others can write to), one sentence each, for stderr. */
export type NoteSink = (message: string) => void;

/** O_NOFOLLOW on a link fails with ELOOP (Linux, macOS) or EMLINK (FreeBSD). */
function isLinkError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ELOOP" || code === "EMLINK";
}

/**
 * Opens a log for reading; a symbolic link is refused (FileReadError). `again`: a file read before is opened
 * again by name, to be checked for the same one: without waiting (O_NONBLOCK), as a FIFO put in its place
 * would otherwise hold the open (and a thread of the pool) until someone writes to it.
 */
export async function openLogFile(file: string, again = false): Promise<FileHandle> {
  try {
    return await open(file, constants.O_RDONLY | O_NOFOLLOW | (again ? (constants.O_NONBLOCK ?? 0) : 0));
  } catch (err) {
    if (isLinkError(err)) throw new FileReadError(symlinkMessage("the log", file));
    throw err;
  }
}

/** What a FILE argument is, without following it: a link is refused (FileReadError). */
export async function inputKind(input: string, onNote: NoteSink = () => undefined): Promise<"file" | "folder"> {
  const info = await lstat(input).catch((err: NodeJS.ErrnoException) => {
    throw new FileReadError(`cannot read ${input}: ${err.code ?? err.message}`);
  });
  if (info.isSymbolicLink()) throw new FileReadError(symlinkMessage("the log", input));
  if (!info.isDirectory()) return "file";
  warnIfOthersCanWrite(input, info, onNote);
  return "folder";
}

/** The names of a folder's regular files; links (and anything else) are left out, a link with a note. */
export async function regularFilesIn(dir: string, onNote: NoteSink = () => undefined): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  for (const e of entries) if (e.isSymbolicLink()) onNote(`${path.join(dir, e.name)} is a symbolic link: skipped (links are never followed)`);
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

function warnIfOthersCanWrite(dir: string, info: Stats, onNote: NoteSink): void {
  if (process.platform === "win32" || (info.mode & 0o022) === 0) return;
  onNote(`warning: other users can write to the log folder ${dir} (mode ${octal(info.mode)}): they could add or replace logs in it`);
}
