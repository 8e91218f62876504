/**
 * The audit key and the audit state of `--audit-chain`, in the audit folder (`<ca-dir>/audit`, 0700, or
 * `--audit-dir` when the CA folder is read-only):
 *
 * - `audit.key`: 256 random bits, hex, created 0600 on first use. Whoever can read it can write records
 *   that verify: it is refused, like the CA key, when others could read it.
 * - `<sha256 of the log's absolute path, 16 hex>.state`: one line, the log's path, the chain's identity (the
 *   hash of its seq-0 record) and the seq and hash of the last record written to it, sealed with the key. Rewritten in place after every write of the log
 *   (one fixed-size pwrite), so that a cut at the end of the log shows: the log ends before the state.
 *   The next start on the same log continues the chain from it, so a log truncated or deleted while the
 *   proxy was down shows too, at the seam.
 */
import { nodeCrypto } from "../util/lazy-crypto.js";
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, linkSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../util/usage-error.js";
import {
  PRIVATE_FILE_MODE,
  PrivateFileError,
  ensurePrivateDir,
  errorCode,
  openPrivateWrite,
  readPrivateFile,
  shellQuote,
} from "../util/private-file.js";
import { deriveAuditKeys, lineHash, macOf, sameMac, seal, unseal, type AuditKeys, type ChainPosition } from "./audit-chain.js";

export const AUDIT_KEY_FILE = "audit.key";

export class AuditSetupError extends UsageError {}

export interface ChainState extends ChainPosition {
  /** Absolute path of the log file the chain is written to (its newest file when rotated). */
  log: string;
  /**
   * The chain's identity: the hash of its seq-0 record. A copy of the log (renamed, archived, on another
   * machine) finds its state by it. Absent in states written before it was kept.
   */
  chain?: string;
  /** ISO 8601 time of the checkpoint. */
  updated: string;
}

/** null: no state; `problem`: a state that cannot be trusted (the message says why). */
export type StateRead = { file: string; state: ChainState } | { file: string; problem: string } | null;

/** The key, creating the folder (0700) and the key (0600) on first use. */
export function loadOrCreateAuditKey(dir: string): AuditKeys {
  try {
    ensurePrivateDir(dir, "The audit folder");
  } catch (error) {
    if (error instanceof PrivateFileError) throw new AuditSetupError(`${error.message} Give another one with --audit-dir.`);
    throw new AuditSetupError(
      `--audit-chain keeps its key and state in ${dir}, which cannot be created (${errorCode(error) ?? String(error)}). ` +
        `If the CA folder is read-only, give a private, writable folder with --audit-dir.`,
    );
  }
  const file = path.join(dir, AUDIT_KEY_FILE);
  const existing = readAuditKey(dir);
  if (existing) return existing;
  createKeyFile(file);
  const created = readAuditKey(dir);
  if (!created) throw new AuditSetupError(`${file} disappeared while it was being created.`);
  return created;
}

/** The key in `dir`, or null when there is none. Never creates anything. */
export function readAuditKey(dir: string): AuditKeys | null {
  const file = path.join(dir, AUDIT_KEY_FILE);
  let text: string | null;
  try {
    text = readPrivateFile(file, "The audit key");
  } catch (error) {
    if (errorCode(error) === "ENOTDIR") return null;
    if (!(error instanceof PrivateFileError)) throw error;
    if (error.problem !== "readable_by_others" && error.problem !== "writable_by_others") throw new AuditSetupError(error.message);
    throw new AuditSetupError(
      `${error.message.replace(/ If nobody else.*$/, "")} Whoever read it can write log records that verify, so it must ` +
        `be replaced: move it away (keep it to check older logs with \`verify-log --audit-dir\`, knowing they may ` +
        `have been forged), and a new key is created on the next start with --audit-chain.`,
    );
  }
  if (text === null) return null;
  const hex = text.trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new AuditSetupError(`${file} is not an mcp-wiretap audit key (64 hex digits). Move it away.`);
  return deriveAuditKeys(Buffer.from(hex, "hex"));
}

/** Written to a temporary file and linked in place: two processes starting at once end up with one key. */
function createKeyFile(file: string): void {
  const temp = `${file}.${nodeCrypto().randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(temp, "wx", PRIVATE_FILE_MODE);
  try {
    writeSync(fd, `${nodeCrypto().randomBytes(32).toString("hex")}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, file);
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
  } finally {
    unlinkSync(temp);
  }
}

export function statePathFor(dir: string, logFile: string): string {
  const id = nodeCrypto().createHash("sha256").update(path.resolve(logFile)).digest("hex").slice(0, 16);
  return path.join(dir, `${id}.state`);
}

export function readChainState(file: string, keys: AuditKeys): StateRead {
  let text: string | null;
  try {
    text = readPrivateFile(file, "The audit state");
  } catch (error) {
    if (error instanceof PrivateFileError) return { file, problem: error.message };
    throw error;
  }
  return parseChainState(text, file, keys);
}

/** The state in `text` (the content of `file`), checked against its MAC. */
export function parseChainState(text: string | null, file: string, keys: AuditKeys): StateRead {
  const line = text?.trim();
  if (!line) return null;
  const sealed = unseal(line);
  if (!sealed || !sameMac(sealed.mac, macOf(sealed.unsealed, keys.state))) {
    return { file, problem: `the audit state ${file} does not match its MAC (edited, or written with another key)` };
  }
  const state = JSON.parse(sealed.unsealed) as Partial<ChainState> & { version?: unknown };
  const chainOk = state.chain === undefined || typeof state.chain === "string";
  if (state.version !== 1 || typeof state.log !== "string" || typeof state.seq !== "number" || typeof state.hash !== "string" || !chainOk) {
    return { file, problem: `the audit state ${file} is not in a format this version knows` };
  }
  const chain = state.chain === undefined ? {} : { chain: state.chain };
  return { file, state: { log: state.log, ...chain, seq: state.seq, hash: state.hash, updated: String(state.updated) } };
}

/** Rewrites the state in place: one write of a fixed size, so the file is never seen shorter or longer. */
export class ChainStateWriter {
  private readonly fd: number;
  private readonly size: number;
  private sized = false;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly log: string,
    private readonly keys: AuditKeys,
    /** The chain's identity; null until its seq-0 record is saved (a new chain), or when not known. */
    private chain: string | null = null,
  ) {
    this.fd = openPrivateWrite(file, "The audit state");
    const longestHash = `sha256:${"f".repeat(64)}`;
    const longest = this.line({ seq: Number.MAX_SAFE_INTEGER, hash: longestHash }, new Date(8.64e15 - 1), longestHash);
    this.size = Math.ceil((Buffer.byteLength(longest) + 1) / 512) * 512;
  }

  /** `identity`: the chain's, once its seq-0 record is written (a new chain). */
  save(position: ChainPosition, identity: string | null = null): void {
    if (this.closed) return;
    this.chain ??= identity;
    const line = this.line(position, new Date());
    const bytes = Buffer.alloc(this.size, " ");
    bytes.write(line);
    bytes[this.size - 1] = 0x0a;
    if (!this.sized) ftruncateSync(this.fd, this.size);
    this.sized = true;
    writeSync(this.fd, bytes, 0, bytes.length, 0);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private line(position: ChainPosition, at: Date, identity = this.chain): string {
    const chain = identity === null ? {} : { chain: identity };
    return seal(JSON.stringify({ version: 1, log: this.log, ...chain, seq: position.seq, hash: position.hash, updated: at.toISOString() }), this.keys.state);
  }
}

/** What a log sink needs to write a chain to `logFile` (null: stdout or a descriptor, no state kept). */
export function prepareAuditChain(dir: string, logFile: string | null): { keys: AuditKeys; from: ChainPosition | null; state: ChainStateWriter | null } {
  const keys = loadOrCreateAuditKey(dir);
  if (logFile === null) return { keys, from: null, state: null };
  const log = path.resolve(logFile);
  const statePath = statePathFor(dir, log);
  const previous = readChainState(statePath, keys);
  if (previous && "problem" in previous) {
    throw new AuditSetupError(
      `${sentence(previous.problem)} Check the log with \`mcp-wiretap verify-log\`; to start a new chain, move ${shellQuote(statePath)} away.`,
    );
  }
  const continued = previous && previous.state.log === log ? previous.state : null;
  let from = continued ? { seq: continued.seq, hash: continued.hash } : null;
  // Records written after the last checkpoint (the proxy was killed between the two): go on after them
  // rather than number the next records again. Only a record sealed with our key is taken.
  const tail = sealedLastRecord(log, keys);
  if (tail && from && tail.seq > from.seq) from = tail;
  try {
    // A chain continued from a state written before the identity was kept: its seq-0 record, if this file holds it.
    const chain = continued ? (continued.chain ?? sealedFirstRecord(log, keys)) : null;
    return { keys, from, state: new ChainStateWriter(statePath, log, keys, chain) };
  } catch (error) {
    if (error instanceof UsageError) throw new AuditSetupError(error.message);
    throw error;
  }
}

/** "the audit state … (…)" → "The audit state … (…)." */
function sentence(text: string): string {
  const trimmed = text.replace(/\.$/, "");
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}.`;
}

/** Largest last line read back at start; past it the chain goes on from the state alone. */
const MAX_TAIL_BYTES = 64 * 1024 * 1024;
/** The first record is a `start` record of a few KiB. */
const MAX_FIRST_RECORD_BYTES = 1024 * 1024;

/** The position of the log's last line, if it is a whole record sealed with `keys`. */
function sealedLastRecord(log: string, keys: AuditKeys): ChainPosition | null {
  return sealedLine(log, keys, (fd, size) => {
    const length = Math.min(size, MAX_TAIL_BYTES);
    const tail = Buffer.alloc(length);
    readSync(fd, tail, 0, length, size - length);
    if (tail[length - 1] !== 0x0a) return null; // cut mid-record
    const start = tail.lastIndexOf(0x0a, length - 2) + 1;
    if (start === 0 && length < size) return null;
    return tail.subarray(start, length - 1).toString("utf8");
  });
}

/** The hash of the log's first line, if it is the seq-0 record of a chain sealed with `keys`. */
function sealedFirstRecord(log: string, keys: AuditKeys): string | null {
  const first = sealedLine(log, keys, (fd, size) => {
    const head = Buffer.alloc(Math.min(size, MAX_FIRST_RECORD_BYTES));
    const read = readSync(fd, head, 0, head.length, 0);
    const end = head.subarray(0, read).indexOf(0x0a);
    return end < 0 ? null : head.subarray(0, end).toString("utf8");
  });
  return first?.seq === 0 ? first.hash : null;
}

/** The line `pick` reads from the log (never through a link), if it is a whole record sealed with `keys`. */
function sealedLine(log: string, keys: AuditKeys, pick: (fd: number, size: number) => string | null): ChainPosition | null {
  let fd: number;
  try {
    fd = openSync(log, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size === 0) return null;
    const line = pick(fd, stats.size);
    if (line === null) return null;
    const sealed = unseal(line);
    if (!sealed || !sameMac(sealed.mac, macOf(sealed.unsealed, keys.records))) return null;
    const seq = (JSON.parse(line) as { seq?: unknown }).seq;
    return typeof seq === "number" ? { seq, hash: lineHash(line) } : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}
