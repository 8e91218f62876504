/**
 * Wrapping or unwrapping the servers of one config file on disk, safely:
 * - the file is edited where it really is (a symbolic link of our own, such as a dotfiles link, is followed;
 *   one of another user is refused), only when it is a regular file of our own user, in UTF-8;
 * - before the first change a backup `FILE.mcp-wiretap-backup` is written (0600, never replaced later);
 * - the new text is checked to read back as intended (plan.ts), then written to a temporary file with the
 *   file's own mode and renamed over it, after making sure nobody changed the file meanwhile;
 * - what unwrap needs to put back the exact bytes is kept in a state file of ours (wrap-state.ts).
 */
import { lstatSync, readFileSync, realpathSync, rmSync } from "node:fs";
import type { ConfigLocation } from "./clients.js";
import { type Action, type EntryOutcome, plan, PlanError, whereKey } from "./plan.js";
import type { Launcher } from "./server-entry.js";
import { unifiedDiff } from "./text-edits.js";
import { readWrapRecords, writeWrapRecords } from "./wrap-state.js";
import { errorCode, replaceProblem, writeFileAtomic } from "../util/private-file.js";

export interface FileResult {
  location: ConfigLocation;
  status: "not found" | "changed" | "unchanged" | "would change" | "refused";
  /** The file edited, when the configured path is a link to it. */
  realFile?: string;
  outcomes: EntryOutcome[];
  notes: string[];
  diff?: string;
  backup?: string;
}

export interface FileOptions {
  servers: readonly string[];
  launcher: Launcher;
  stateDir: string;
  dryRun: boolean;
  remote?: boolean;
}

export const BACKUP_SUFFIX = ".mcp-wiretap-backup";

export async function editConfigFile(location: ConfigLocation, action: Action, o: FileOptions): Promise<FileResult> {
  const result: FileResult = { location, status: "unchanged", outcomes: [], notes: [] };
  const refuse = (why: string): FileResult => ({ ...result, status: "refused", notes: [...result.notes, why] });
  const real = realFile(location.file);
  if (real === null) return { ...result, status: "not found" };
  if (typeof real === "object") return refuse(real.refused);
  if (real !== location.file) result.realFile = real;
  const problem = replaceProblem(real);
  if (problem) return refuse(`${problem}: left alone`);
  const bytes = readFileSync(real);
  const text = bytes.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(bytes)) return refuse("not UTF-8 text: left alone");
  const records = readWrapRecords(o.stateDir, real);
  let p;
  try {
    p = plan(text, location, action, { servers: o.servers, launcher: o.launcher, records, remote: o.remote === true });
  } catch (error) {
    if (error instanceof PlanError) return refuse(error.message);
    return refuse(`cannot be read as ${location.format === "toml" ? "TOML" : "JSON"} (${(error as Error).message}): left alone`);
  }
  Object.assign(result, { outcomes: p.outcomes, notes: [...result.notes, ...p.notes] });
  if (p.edits.length === 0) return result;
  result.diff = unifiedDiff(location.file, text, p.edits);
  if (o.dryRun) return { ...result, status: "would change" };

  const backup = real + BACKUP_SUFFIX;
  if (await writeFileAtomic(backup, text, 0o600, { exclusive: true })) result.backup = backup;
  else if (replaceProblem(backup)) return refuse(`${replaceProblem(backup)}, where the backup goes: nothing written`);
  const released = new Set(p.released.map(whereKey));
  const kept = records.filter((r) => !released.has(whereKey(r.where)) && !p.records.some((n) => whereKey(n.where) === whereKey(r.where)));
  const nextRecords = [...kept, ...p.records];
  if (action === "wrap") writeWrapRecords(o.stateDir, real, nextRecords); // before the file: a crash between the two loses nothing

  if (!readFileSync(real).equals(bytes)) return refuse("the file changed while it was being edited (is the client writing it?): nothing written, run again");
  await writeFileAtomic(real, p.text, lstatSync(real).mode & 0o7777);
  if (action === "unwrap") {
    writeWrapRecords(o.stateDir, real, nextRecords);
    removeBackupIfRestored(backup, p.text, nextRecords.length);
  }
  return { ...result, status: "changed" };
}

/** The file to edit: the path, or where our own link points; null when missing; `refused` when a link is not ours. */
function realFile(file: string): string | null | { refused: string } {
  let info;
  try {
    info = lstatSync(file);
  } catch (error) {
    if (errorCode(error) === "ENOENT" || errorCode(error) === "ENOTDIR") return null;
    return { refused: `cannot be examined (${errorCode(error) ?? String(error)})` };
  }
  if (!info.isSymbolicLink()) return file;
  const me = process.getuid?.();
  if (me !== undefined && info.uid !== me) return { refused: `a symbolic link of another user (uid ${info.uid}): left alone` };
  try {
    return realpathSync(file);
  } catch {
    return { refused: "a symbolic link to nothing: left alone" };
  }
}

/** Once every entry is unwrapped and the file is again what the backup holds, the backup has done its job. */
function removeBackupIfRestored(backup: string, text: string, recordsLeft: number): void {
  if (recordsLeft > 0) return;
  try {
    if (!replaceProblem(backup) && readFileSync(backup, "utf8") === text) rmSync(backup);
  } catch {
    // no backup, or not ours to remove
  }
}
