/**
 * Where verify-log finds the audit state of a log that is not where it was written (renamed, archived,
 * copied to another machine): by the chain's identity among the states of an audit folder, or in a state
 * file given by hand (`--state`). See audit-state.ts.
 */
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import path from "node:path";
import type { AuditKeys } from "./audit-chain.js";
import { parseChainState, readChainState, type StateRead } from "./audit-state.js";
import { UsageError } from "../util/usage-error.js";

/** An audit folder holds one state per log path; past this many, the rest are not read. */
const MAX_STATES_SCANNED = 10_000;
/** A state is one line of under 1 KiB. */
const MAX_STATE_BYTES = 64 * 1024;
const STATE_FILE = /^[0-9a-f]{16}\.state$/;

/**
 * The state, in `dir`, of the chain whose seq-0 record has hash `chain` (the furthest one, should there be
 * two); null when none names it. States that cannot be read or do not match their MAC are skipped here:
 * they are another log's business.
 */
export function findStateOfChain(dir: string, chain: string, keys: AuditKeys): StateRead {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => STATE_FILE.test(name)).slice(0, MAX_STATES_SCANNED);
  } catch {
    return null;
  }
  let best: StateRead = null;
  for (const name of names) {
    let read: StateRead;
    try {
      read = readChainState(path.join(dir, name), keys);
    } catch {
      continue;
    }
    if (read === null || !("state" in read) || read.state.chain !== chain) continue;
    if (best === null || ("state" in best && read.state.seq > best.state.seq)) best = read;
  }
  return best;
}

/**
 * A state file given by hand. It may be a copy owned by anyone with any mode: its MAC, not its owner,
 * says the proxy wrote it. Not a regular file, or unreadable: a usage error.
 */
export function readStateCopy(file: string, keys: AuditKeys): StateRead {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new UsageError(`--state: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new UsageError(`--state: ${file} is not a regular file`);
    const bytes = Buffer.alloc(MAX_STATE_BYTES);
    const length = readSync(fd, bytes, 0, bytes.length, 0);
    return parseChainState(bytes.subarray(0, length).toString("utf8"), file, keys) ?? { file, problem: `the audit state ${file} is empty` };
  } finally {
    closeSync(fd);
  }
}
