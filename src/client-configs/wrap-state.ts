/**
 * What `wrap` remembers so that `unwrap` restores each entry byte for byte: per config file, the entry's
 * text before and after wrapping. Kept outside the config (a client may reject keys it does not know), in
 * `wrapped/` of the per-user state folder, one 0600 file per config (it may hold the entry's env secrets).
 * Without it unwrap still works from the wrapped command line itself, restoring command and args.
 */
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { ensurePrivateDir, readPrivateFile, replaceProblem, writeFileAtomicSync } from "../util/private-file.js";
import type { WrapRecord } from "./plan.js";

const StateSchema = z.object({
  file: z.string(),
  entries: z.array(z.object({ where: z.array(z.string()), original: z.string(), wrapped: z.string() })),
});

export function wrapStateFile(stateDir: string, configFile: string): string {
  return path.join(stateDir, "wrapped", `${createHash("sha256").update(configFile).digest("hex").slice(0, 24)}.json`);
}

export function readWrapRecords(stateDir: string, configFile: string): WrapRecord[] {
  const text = readPrivateFile(wrapStateFile(stateDir, configFile), "the wrap state");
  if (text === null) return [];
  try {
    const state = StateSchema.parse(JSON.parse(text));
    return state.file === configFile ? state.entries : [];
  } catch {
    return []; // unreadable: unwrap falls back to the wrapped command line
  }
}

export function writeWrapRecords(stateDir: string, configFile: string, entries: WrapRecord[]): void {
  const file = wrapStateFile(stateDir, configFile);
  if (entries.length === 0) {
    if (!replaceProblem(file)) rmSync(file, { force: true });
    return;
  }
  ensurePrivateDir(path.dirname(file), "the wrap state folder");
  writeFileAtomicSync(file, JSON.stringify({ file: configFile, entries }, null, 2) + "\n");
}
