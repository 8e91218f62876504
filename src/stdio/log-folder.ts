import { constants, lstatSync, mkdirSync, openSync, readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { UsageError } from "../util/usage-error.js";

export class LogFolderError extends UsageError {}

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
export const STDIO_LOG_SUFFIX = ".ndjson";

/**
 * Where `mcp-wiretap stdio` writes records without --log-file: `$XDG_STATE_HOME/mcp-wiretap/` (when it is
 * an absolute path, as the XDG spec asks), else `~/.local/state/mcp-wiretap/`.
 */
export function stdioLogFolder(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), ".local", "state");
  return path.join(base, "mcp-wiretap");
}

/**
 * Creates the folder 0700 when missing. An existing one must be a real folder of ours that nobody else can
 * write to: a planted symlink or a shared folder is refused, never chmod-ed.
 */
export function ensureLogFolder(dir: string): void {
  try {
    mkdirSync(path.dirname(dir), { recursive: true, mode: DIR_MODE });
    mkdirSync(dir, { mode: DIR_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new LogFolderError(`cannot create the log folder ${dir} (${code(err)})`);
  }
  const info = lstatSync(dir);
  if (info.isSymbolicLink() || !info.isDirectory()) throw new LogFolderError(`the log folder ${dir} is not a folder (a symlink?): refusing to write there`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) throw new LogFolderError(`the log folder ${dir} belongs to another user: refusing to write there`);
  if (process.platform !== "win32" && (info.mode & 0o022) !== 0) {
    throw new LogFolderError(`the log folder ${dir} can be written by others (mode ${(info.mode & 0o777).toString(8)}): run chmod 700 on it`);
  }
}

/** One new file per launch: `2026-05-01T10-20-30.123Z-LABEL-PID.ndjson`, created 0600, never through a symlink. */
export function openLaunchLog(dir: string, label: string, pid = process.pid, now = new Date()): { file: string; fd: number } {
  ensureLogFolder(dir);
  const stamp = now.toISOString().replace(/:/g, "-");
  const safe = label.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 64) || "server";
  const file = path.join(dir, `${stamp}-${safe}-${pid}${STDIO_LOG_SUFFIX}`);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0);
  try {
    return { file, fd: openSync(file, flags, FILE_MODE) };
  } catch (err) {
    throw new LogFolderError(`cannot create the log file ${file} (${code(err)})`);
  }
}

/** The most recently written launch log in `dir`, or null. */
export function newestLaunchLog(dir: string): string | null {
  let best: { file: string; mtime: number } | null = null;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  for (const name of names) {
    if (!name.endsWith(STDIO_LOG_SUFFIX)) continue;
    const file = path.join(dir, name);
    try {
      const info = statSync(file);
      if (info.isFile() && (!best || info.mtimeMs > best.mtime || (info.mtimeMs === best.mtime && name > path.basename(best.file)))) {
        best = { file, mtime: info.mtimeMs };
      }
    } catch {
      // Removed meanwhile.
    }
  }
  return best?.file ?? null;
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}
