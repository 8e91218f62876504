import { setTimeout as sleep } from "node:timers/promises";
import path from "node:path";
import { inputKind, regularFilesIn, type NoteSink } from "../../saved-logs/log-inputs.js";

export interface LogInput {
  file: string;
  /** A rotated file (`name.ndjson.3`): read once, never followed. */
  rotated: boolean;
}

const ROTATED = /^(.*\.ndjson)\.(\d+)$/;

/**
 * The files `mcp-wiretap ui` reads, oldest first: each FILE as given; a folder gives every `*.ndjson` in it
 * with its rotated files (`x.ndjson.2`, `x.ndjson.1`, then `x.ndjson`). Links are never followed: a FILE
 * that is one is refused, one in a folder skipped with a note (src/saved-logs/log-inputs.ts).
 */
export async function resolveLogInputs(args: readonly string[], onNote?: NoteSink): Promise<LogInput[]> {
  const out: LogInput[] = [];
  for (const arg of args) {
    if ((await inputKind(arg, onNote)) === "file") {
      out.push({ file: arg, rotated: ROTATED.test(path.basename(arg)) });
      continue;
    }
    const names = (await regularFilesIn(arg, onNote)).sort();
    const bases = names.filter((n) => n.endsWith(".ndjson"));
    for (const base of bases) {
      const rotated = names
        .map((n) => ROTATED.exec(n))
        .filter((m): m is RegExpExecArray => m !== null && m[1] === base)
        .sort((a, b) => Number(b[2]) - Number(a[2]));
      for (const m of rotated) out.push({ file: path.join(arg, m[0]), rotated: true });
      out.push({ file: path.join(arg, base), rotated: false });
    }
  }
  return out;
}

/** How often a watched folder is listed for logs of new launches. */
const WATCH_INTERVAL_MS = 1000;

/** Follows every log that appears in `dir` after the start (a new `mcp-wiretap stdio` launch), until `signal`. */
export async function watchForNewLogs(dir: string, known: Set<string>, follow: (file: string) => Promise<void>, signal: AbortSignal, onNote: (message: string) => void): Promise<void> {
  const readers: Promise<void>[] = [];
  while (!signal.aborted) {
    await sleep(WATCH_INTERVAL_MS, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    const inputs = await resolveLogInputs([dir], onNote).catch(() => []);
    for (const input of inputs) {
      if (input.rotated || known.has(input.file)) continue;
      known.add(input.file);
      readers.push(follow(input.file));
    }
  }
  await Promise.allSettled(readers);
}
