import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { replaceProblem, writeFileAtomicSync } from "../util/private-file.js";
import { UsageError } from "../util/usage-error.js";
import { isPlainObject } from "../util/plain-object.js";

/**
 * pins.json on disk. In memory every name (server, tool) is a Map key, never a property of a plain
 * object: a tool called "__proto__" is data. JSON.parse and Object.fromEntries define own properties,
 * so the file round-trips such names safely.
 */

export interface ToolPin {
  /** sha256 of the canonical definition the user trusts (null: never approved, only seen). */
  sha256: string | null;
  firstSeen: string;
  approvedAt: string | null;
  /** A definition seen since that differs from the pinned one: what `pins approve` would accept. */
  pending: { sha256: string; seen: string } | null;
}

export interface ServerPins {
  firstSeen: string | undefined;
  tools: Map<string, ToolPin>;
}

export type PinTable = Map<string, ServerPins>;

export class PinStoreError extends UsageError {}

/** Reads the pin file; a missing file is an empty table. Refuses a symbolic link rather than follow it. */
export function readPinFile(file: string): PinTable {
  let text: string;
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return new Map();
    if (code === "ELOOP") throw new PinStoreError(`${file}: is a symbolic link; refusing to follow it (point --pins at the real file)`);
    throw new PinStoreError(`${file}: cannot read the pin store (${code})`);
  }
  try {
    return parsePinFile(JSON.parse(text));
  } catch (err) {
    throw new PinStoreError(`${file}: not a pin store (${(err as Error).message}); move it away to start over`);
  }
}

function parsePinFile(parsed: unknown): PinTable {
  if (!isPlainObject(parsed) || parsed.version !== 1 || !isPlainObject(parsed.servers)) throw new Error("unknown format");
  const table: PinTable = new Map();
  for (const [server, entry] of Object.entries(parsed.servers)) {
    if (!isPlainObject(entry) || !isPlainObject(entry.tools)) throw new Error(`server ${JSON.stringify(server)}: no tools`);
    if (entry.firstSeen !== undefined && typeof entry.firstSeen !== "string") throw new Error(`server ${JSON.stringify(server)}: bad firstSeen`);
    const tools = new Map<string, ToolPin>();
    for (const [name, pin] of Object.entries(entry.tools)) {
      if (!isPin(pin)) throw new Error(`server ${JSON.stringify(server)}, tool ${JSON.stringify(name)}: malformed pin`);
      tools.set(name, { sha256: pin.sha256, firstSeen: pin.firstSeen, approvedAt: pin.approvedAt, pending: pin.pending && { sha256: pin.pending.sha256, seen: pin.pending.seen } });
    }
    table.set(server, { firstSeen: entry.firstSeen, tools });
  }
  return table;
}


export function isPin(v: unknown): v is ToolPin {
  if (!isPlainObject(v)) return false;
  const nullableString = (x: unknown) => x === null || typeof x === "string";
  const pending = v.pending;
  return (
    nullableString(v.sha256) &&
    typeof v.firstSeen === "string" &&
    nullableString(v.approvedAt) &&
    (pending === null || (isPlainObject(pending) && typeof pending.sha256 === "string" && typeof pending.seen === "string"))
  );
}

/** The table as the file's JSON: plain objects built with Object.fromEntries (own properties only). */
export function pinFileJson(table: PinTable): string {
  const servers = Object.fromEntries(
    [...table].map(([server, entry]) => [server, { ...(entry.firstSeen !== undefined ? { firstSeen: entry.firstSeen } : {}), tools: Object.fromEntries(entry.tools) }]),
  );
  return `${JSON.stringify({ version: 1, servers }, null, 2)}\n`;
}

/**
 * Atomic replace: a new 0600 file beside the old one (O_EXCL, so never through a planted link), fsynced,
 * renamed over it. A missing folder is created 0700; an existing one is left as it is.
 */
export function writePinFile(file: string, text: string): void {
  const problem = replaceProblem(file);
  if (problem) throw new Error(`the pin store ${problem}: it is never replaced. Move it away, or choose another --ca-dir.`);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomicSync(file, text);
}

/** Identity of the file as last read or written: another process (`pins approve`) may rewrite it. */
export function pinFileStamp(file: string): string | null {
  try {
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const s = fstatSync(fd);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}
