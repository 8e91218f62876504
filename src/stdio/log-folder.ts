import { lstatSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPrivateFile, ensurePrivateDir, errorCode, existsNoFollow } from "../util/private-file.js";
import { UsageError } from "../util/usage-error.js";

export class LogFolderError extends UsageError {}

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
 * Creates the folder 0700 when missing (see util/private-file for the rules an existing one must meet). A
 * symbolic link is refused here even when it is ours: every launch finds this folder without being told.
 */
export function ensureLogFolder(dir: string): void {
  if (existsNoFollow(dir) && lstatSync(dir).isSymbolicLink()) throw new LogFolderError(`the log folder ${dir} is not a folder (a symlink?): refusing to write there`);
  try {
    ensurePrivateDir(dir, "the log folder");
  } catch (err) {
    if (err instanceof UsageError) throw new LogFolderError(err.message);
    throw new LogFolderError(`cannot create the log folder ${dir} (${errorCode(err) ?? String(err)})`);
  }
}

/** One new file per launch: `2026-05-01T10-20-30.123Z-LABEL-PID.ndjson`, created 0600, never through a symlink. */
export function openLaunchLog(dir: string, label: string, pid = process.pid, now = new Date()): { file: string; fd: number } {
  ensureLogFolder(dir);
  const stamp = now.toISOString().replace(/:/g, "-");
  const safe = label.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 64) || "server";
  const file = path.join(dir, `${stamp}-${safe}-${pid}${STDIO_LOG_SUFFIX}`);
  try {
    return { file, fd: createPrivateFile(file) };
  } catch (err) {
    throw new LogFolderError(`cannot create the log file ${file} (${errorCode(err) ?? String(err)})`);
  }
}

/** The most recently written launch log in `dir` (regular files only), or null. */
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
      // Not followed: a link planted here is never the newest launch's log.
      const info = lstatSync(file);
      if (info.isFile() && (!best || info.mtimeMs > best.mtime || (info.mtimeMs === best.mtime && name > path.basename(best.file)))) {
        best = { file, mtime: info.mtimeMs };
      }
    } catch {
      // Removed meanwhile.
    }
  }
  return best?.file ?? null;
}
