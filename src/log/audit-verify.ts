/**
 * Checks an audit-chained log (one or more files, oldest rotated file first): the hash chain (anyone can),
 * the MAC of every record (with the audit key), and where the log ends against its audit state (with the
 * key and the state). See audit-chain.ts and audit-state.ts.
 */
import path from "node:path";
import { GENESIS_HASH, lineHash, macOf, sameMac, unseal, type AuditKeys } from "./audit-chain.js";
import type { StateRead } from "./audit-state.js";

export interface ChainProblem {
  file: string;
  line: number;
  seq: number | null;
  problem: string;
}

export interface ChainReport {
  records: number;
  problems: ChainProblem[];
  /** The chain's last record was `stop`: the proxy stopped cleanly there. */
  endedCleanly: boolean;
  /** Every record's MAC was checked with the audit key. False: only the unkeyed hashes were. */
  authenticated: boolean;
  /** How the end of the log compares with its audit state. */
  state: "matched" | "behind" | "differs" | "none";
  /** The last record found. */
  last: { file: string; line: number; seq: number } | null;
  /** Facts worth knowing that are not problems. */
  notes: string[];
}

export interface VerifyOptions {
  /** null: no key available, only the unkeyed hashes can be checked. */
  keys: AuditKeys | null;
  /** The audit state of a log, by its absolute path. */
  stateLookup?: (log: string) => StateRead;
  /** The audit state of a chain, by its identity (the hash of its seq-0 record): for a log moved or copied. */
  stateOfChain?: (chain: string) => StateRead;
  /** The audit state to compare with, given by hand (`--state`): no lookup. */
  givenState?: StateRead;
}

interface Last {
  file: string;
  line: number;
  seq: number;
  hash: string;
}

export function verifyChain(files: readonly { name: string; text: string }[], opts: VerifyOptions): ChainReport {
  const problems: ChainProblem[] = [];
  const macProblems: ChainProblem[] = [];
  let sealedRecords = 0;
  let prevLine: string | null = null;
  let prevAt = { file: "", line: 0 };
  let prevSeq: number | null = null;
  let records = 0;
  let lastEvent: unknown = null;
  let last: Last | null = null;
  /** The chain's identity: the hash of its seq-0 record, when the first file starts with it. */
  let chain: string | null = null;
  for (const { name, text } of files) {
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    lines.forEach((line, index) => {
      const at = { file: name, line: index + 1 };
      let record: { seq?: unknown; prevHash?: unknown; event?: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        problems.push({ ...at, seq: null, problem: "not a JSON record (edited or cut short)" });
        prevLine = line;
        prevAt = at;
        prevSeq = prevSeq === null ? null : prevSeq + 1;
        return;
      }
      records++;
      lastEvent = record.event;
      const seq = typeof record.seq === "number" ? record.seq : null;
      const sealed = unseal(line);
      if (sealed) sealedRecords++;
      if (opts.keys) {
        if (!sealed) macProblems.push({ ...at, seq, problem: "forged or edited: the record carries no MAC (every record of a keyed chain does)" });
        else if (!sameMac(sealed.mac, macOf(sealed.unsealed, opts.keys.records))) {
          macProblems.push({ ...at, seq, problem: "forged or edited: its MAC does not match (the proxy did not write this record with this key)" });
        }
      }
      problems.push(...chainProblems(at, record, seq, prevLine, prevAt, prevSeq));
      if (prevLine === null && seq === 0) chain = lineHash(line);
      if (seq !== null) last = { ...at, seq, hash: lineHash(line) };
      prevLine = line;
      prevAt = at;
      prevSeq = seq ?? prevSeq;
    });
  }
  const notes: string[] = [];
  const authenticated = opts.keys !== null && sealedRecords > 0;
  if (opts.keys && sealedRecords === 0 && records > 0) {
    notes.push("no record carries a MAC (written without a key, by an older version): only the unkeyed hashes were checked");
  } else if (opts.keys && records > 0 && macProblems.length === records) {
    const first = macProblems[0]!;
    problems.unshift({
      ...first,
      problem:
        `none of the ${records} records carries a valid MAC for this key: the log was written with another key ` +
        `(check --audit-dir or --ca-dir), or every record was rewritten`,
    });
  } else {
    problems.push(...macProblems);
  }
  problems.sort((a, b) => files.findIndex((f) => f.name === a.file) - files.findIndex((f) => f.name === b.file) || a.line - b.line);
  const state = opts.keys ? compareWithState(files, last, chain, opts, problems, notes) : "none";
  const lastFound = last as Last | null;
  return {
    records,
    problems,
    endedCleanly: lastEvent === "stop",
    authenticated,
    state,
    last: lastFound ? { file: lastFound.file, line: lastFound.line, seq: lastFound.seq } : null,
    notes,
  };
}

function chainProblems(
  where: { file: string; line: number },
  record: { prevHash?: unknown },
  seq: number | null,
  prevLine: string | null,
  prevAt: { file: string; line: number },
  prevSeq: number | null,
): ChainProblem[] {
  const at = { ...where, seq };
  if (seq === null || typeof record.prevHash !== "string") {
    return [{ ...at, problem: "record has no seq/prevHash (written without --audit-chain, or edited)" }];
  }
  if (prevLine === null) {
    if (seq === 0 && record.prevHash !== GENESIS_HASH) return [{ ...at, problem: "first record does not start the chain" }];
    if (seq !== 0) {
      return [{ ...at, problem: `chain starts at seq ${seq}: records 0-${seq - 1} are in an earlier file (give it first), or were rotated away or deleted` }];
    }
    return [];
  }
  const expectedSeq = (prevSeq ?? -1) + 1;
  if (seq > expectedSeq) return [{ ...at, problem: `${seq - expectedSeq} record(s) removed before this one (seq ${expectedSeq}-${seq - 1})` }];
  if (seq < expectedSeq) return [{ ...at, problem: `out of order: seq ${seq} after seq ${expectedSeq - 1} (reordered or duplicated)` }];
  if (record.prevHash !== lineHash(prevLine)) {
    // The edited record is the one before (the last of the previous file, for the first record of a file).
    return [{ ...prevAt, seq: seq - 1, problem: "record was edited (its hash does not match the next record's prevHash)" }];
  }
  return [];
}

/**
 * The audit state of the log: the one given (`--state`); else the state of the newest file given, or of the
 * log it was rotated from (`file.1` → `file`); else, for a log renamed, archived or copied, the state that
 * names the chain's identity. A state of another chain says nothing about this one.
 */
function findState(files: readonly { name: string }[], chain: string | null, opts: VerifyOptions, notes: string[]): { found: StateRead; byPath: boolean } {
  if (opts.givenState !== undefined) return { found: opts.givenState, byPath: false };
  const given = path.resolve(files.at(-1)!.name);
  let found = [given, given.replace(/\.\d+$/, "")].map((log) => opts.stateLookup?.(log) ?? null).find((read) => read !== null) ?? null;
  if (found && "state" in found && chain !== null && found.state.chain !== undefined && found.state.chain !== chain) found = null;
  if (found !== null) return { found, byPath: true };
  found = chain !== null && opts.stateOfChain ? opts.stateOfChain(chain) : null;
  if (found && "state" in found) notes.push(`audit state found by the chain's identity: ${found.file} (written for ${found.state.log})`);
  return { found, byPath: false };
}

function compareWithState(
  files: readonly { name: string }[],
  last: Last | null,
  chain: string | null,
  opts: VerifyOptions,
  problems: ChainProblem[],
  notes: string[],
): ChainReport["state"] {
  const newest = files.at(-1);
  if (!newest) return "none";
  const given = path.resolve(newest.name);
  const { found, byPath } = findState(files, chain, opts, notes);
  if (found === null) {
    notes.push(`no audit state for ${given}: whether records were cut from the end could not be checked`);
    return "none";
  }
  const end = { file: last?.file ?? newest.name, line: last?.line ?? 0, seq: last?.seq ?? null };
  if ("problem" in found) {
    problems.push({ file: found.file, line: 1, seq: null, problem: `${found.problem.replace(/\.$/, "")}: it cannot say where the log ends` });
    return "differs";
  }
  const { state } = found;
  if (chain !== null && state.chain !== undefined && state.chain !== chain) {
    problems.push({ ...end, problem: `${found.file} is the state of another chain (its first record differs): it cannot say where this log ends` });
    return "differs";
  }
  if (byPath && state.log !== given) {
    problems.push({ ...end, problem: `missing file: the audit state says the chain goes on to seq ${state.seq} in ${state.log}, which was not given (give it last)` });
    return "differs";
  }
  if (last === null || last.seq < state.seq) {
    const after = last === null ? "the log has no records" : `truncated after seq ${last.seq}`;
    const where = byPath ? "" : ` (written as ${state.log}: if files rotated after this one were not given, give them, newest last)`;
    problems.push({ ...end, problem: `${after}: the audit state says the chain reached seq ${state.seq}${where}` });
    return "differs";
  }
  if (last.seq === state.seq && last.hash !== state.hash) {
    problems.push({ ...end, problem: `the last record (seq ${last.seq}) is not the one the audit state names: it was replaced` });
    return "differs";
  }
  if (last.seq > state.seq) {
    notes.push(`${last.seq - state.seq} record(s) after the audit state's last checkpoint (seq ${state.seq}): written just before the proxy stopped abruptly`);
    return "behind";
  }
  return "matched";
}
