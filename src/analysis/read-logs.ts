import path from "node:path";
import { verifyChain, type ChainReport } from "../log/audit-verify.js";
import { parseRecord } from "../saved-logs/parse-record.js";
import type { LogRecord } from "../saved-logs/filters.js";
import { inputLines } from "../saved-logs/follow.js";
import { inputKind, regularFilesIn, type NoteSink } from "../saved-logs/log-inputs.js";
import { UsageError } from "../util/usage-error.js";

/** One input of an analysis: a file (or standard input) and what could not be read in it. */
export interface LogSource {
  name: string;
  records: number;
  /** Lines that are not JSON records (a line cut short by a crash or a full disk, or edited). */
  unreadable: { line: number; text: string }[];
}

export interface LoadedLogs {
  records: LogRecord[];
  /** Where each record was read: its file (as named, or `(stdin)`) and line, for reports that point at it. */
  origins: WeakMap<LogRecord, { file: string; line: number }>;
  sources: LogSource[];
  /** Audit chain over every file (in order), when the records carry `seq`; null otherwise. */
  chain: ChainReport | null;
}

/** Log file names a folder may hold: `x.ndjson`, `x.jsonl`, `x.log`, and rotated `x.ndjson.3`. */
const LOG_NAME = /\.(ndjson|jsonl|log)(\.(\d+))?$/;

/**
 * The files named by FILE arguments, in reading order: a file as it is; a folder as its log files
 * (regular files only, symlinks skipped with a note), each log's rotated files oldest first (`x.2`, `x.1`,
 * `x`). A FILE that is a symlink is refused (src/saved-logs/log-inputs.ts).
 */
export async function expandInputs(inputs: readonly string[], onNote?: NoteSink): Promise<string[]> {
  const out: string[] = [];
  for (const input of inputs) {
    if (input === "-") {
      out.push(input);
      continue;
    }
    if ((await inputKind(input, onNote)) === "file") {
      out.push(input);
      continue;
    }
    const logs = (await regularFilesIn(input, onNote))
      .filter((name) => LOG_NAME.test(name))
      .map((name) => {
        const m = LOG_NAME.exec(name)!;
        return { name, base: name.slice(0, m.index + 1 + m[1]!.length), rotation: m[3] === undefined ? 0 : Number(m[3]) };
      })
      .sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : b.rotation - a.rotation));
    if (logs.length === 0) throw new UsageError(`${input} holds no log files (*.ndjson, *.jsonl, *.log)`);
    out.push(...logs.map((l) => path.join(input, l.name)));
  }
  return out;
}

/**
 * Reads and parses every record of the inputs (none: standard input). With `verifyChain`, a log written with
 * --audit-chain (its first record has `seq`) is also checked link by link; only then are its lines kept.
 */
export async function loadLogs(inputs: readonly string[], stdin: NodeJS.ReadableStream, opts: { verifyChain?: boolean; onNote?: NoteSink } = {}): Promise<LoadedLogs> {
  // Standard input at a terminal would wait for typing: more likely a forgotten FILE.
  if ((inputs.length === 0 || inputs.includes("-")) && (stdin as { isTTY?: boolean }).isTTY === true) {
    throw new UsageError("give a log file or folder (or pipe a log in)");
  }
  const files = inputs.length === 0 ? ["-"] : await expandInputs(inputs, opts.onNote);
  const records: LogRecord[] = [];
  const origins = new WeakMap<LogRecord, { file: string; line: number }>();
  const sources: LogSource[] = [];
  const texts: { name: string; text: string }[] = [];
  let chained = false;
  for (const file of files) {
    const source: LogSource = { name: file === "-" ? "(stdin)" : file, records: 0, unreadable: [] };
    // Lines are kept for the chain check only: until the first record says whether the file is chained.
    let lines: string[] | null = opts.verifyChain ? [] : null;
    let n = 0;
    for await (const line of inputLines(file, stdin)) {
      n++;
      lines?.push(line);
      if (line.trim() === "") continue;
      const record = parseRecord(line);
      if (record === null) {
        source.unreadable.push({ line: n, text: line.slice(0, 120) });
        continue;
      }
      if (source.records === 0 && typeof record.seq !== "number" && !chained) lines = null;
      if (typeof record.seq === "number") chained = true;
      source.records++;
      records.push(record);
      origins.set(record, { file: source.name, line: n });
    }
    sources.push(source);
    if (lines !== null) texts.push({ name: source.name, text: lines.join("\n") });
  }
  return { records, origins, sources, chain: chained && opts.verifyChain ? verifyChain(texts, { keys: null }) : null };
}
