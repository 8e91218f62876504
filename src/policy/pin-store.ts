import { PinStoreError, pinFileJson, pinFileStamp, readPinFile, writePinFile, type PinTable, type ServerPins, type ToolPin } from "./pin-file.js";

export { PinStoreError, type ToolPin } from "./pin-file.js";

/** Tools first seen this soon after their server count as first use too: a paginated tools/list spans several results. */
const FIRST_USE_WINDOW_MS = 60_000;
/** Bounds on what a hostile server (or client) can make the store hold; real servers list tens of tools. */
export const MAX_PINNED_TOOLS_PER_SERVER = 2_000;
export const MAX_PINNED_SERVERS = 1_000;
/** Tools pinned over all servers: with names of at most MAX_PINNED_NAME_BYTES, the store stays under ~20 MB. */
export const MAX_PINNED_TOOLS = 20_000;
/** A longer tool name is not pinned (the MCP spec asks for at most 128 characters). */
export const MAX_PINNED_NAME_BYTES = 512;

export type PinVerdict = "pinned" | "first_use" | "changed" | "added" | "store_full";

/** One definition seen: its name and digest; `firstUse`: trusted when first seen whenever that is (an app, read when a tool first shows it). */
export interface PinObservation {
  name: string;
  sha256: string;
  firstUse?: boolean;
}

/** Trust-on-first-use pins of tool definitions, per server; a JSON file, mode 0600. */
export class PinStore {
  private table: PinTable;
  private stamp: string | null;
  /** A write failed: the next observation writes even if nothing new was seen. */
  private unsaved = false;

  constructor(readonly file: string) {
    this.stamp = pinFileStamp(file);
    this.table = readPinFile(file);
  }

  /** Takes the file's version when someone else changed it, so an approval is seen (and not overwritten). */
  private refresh(): void {
    const stamp = pinFileStamp(this.file);
    if (stamp === this.stamp) return;
    try {
      this.table = readPinFile(this.file);
      this.stamp = stamp;
    } catch {
      // Unreadable now: keep what we have; the next save replaces it.
    }
  }

  hasServer(server: string): boolean {
    return this.table.has(server);
  }

  servers(): string[] {
    return [...this.table.keys()].sort();
  }

  /** A server's pins, by tool name (sorted). */
  tools(server: string): [string, ToolPin][] {
    return [...(this.table.get(server)?.tools ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * Records the definitions of one tools/list result and writes the file once (only if something
   * changed); says for each tool whether it is the pinned one, a change, new, or beyond the store's bounds.
   */
  observe(server: string, tools: readonly PinObservation[], now: Date): { verdicts: PinVerdict[]; notSaved: string | null } {
    if (!this.unsaved) this.refresh();
    const { verdicts, changed } = observePins(this.table, server, tools, now, this.table.size >= MAX_PINNED_SERVERS);
    if (changed.size === 0 && !this.unsaved) return { verdicts, notSaved: null };
    try {
      this.save();
      this.unsaved = false;
      return { verdicts, notSaved: null };
    } catch (err) {
      // Judging goes on with what is in memory; the record says the pins were not saved.
      this.unsaved = true;
      return { verdicts, notSaved: `${this.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
    }
  }

  /** Accepts the pending definitions of a server's tools (all, or the ones named). */
  approve(server: string, toolNames: readonly string[], now: Date): string[] {
    this.refresh();
    const entry = this.table.get(server);
    if (!entry) throw new PinStoreError(`no pins for server ${server}`);
    const approved = approvePins(server, entry, toolNames, now);
    this.save();
    return approved;
  }

  private save(): void {
    writePinFile(this.file, pinFileJson(this.table));
    this.stamp = pinFileStamp(this.file);
  }
}

/**
 * Trust on first use, over one server's entry of a table (the file store's, or one loaded from the shared
 * store): the verdict for each tool, and the names of the tools whose pin changed (`""`: the server's entry
 * was created). `serversFull`: no new server may be added.
 */
export function observePins(
  table: PinTable,
  server: string,
  tools: readonly PinObservation[],
  now: Date,
  serversFull: boolean,
): { verdicts: PinVerdict[]; changed: Set<string> } {
  const now8601 = now.toISOString();
  const changed = new Set<string>();
  let entry = table.get(server);
  if (!entry) {
    if (serversFull) return { verdicts: tools.map(() => "store_full"), changed };
    entry = { firstSeen: now8601, tools: new Map() };
    table.set(server, entry);
    changed.add("");
  }
  const firstServerVisit = now.getTime() - Date.parse(entry.firstSeen ?? now8601) <= FIRST_USE_WINDOW_MS;
  let pinned = 0;
  for (const e of table.values()) pinned += e.tools.size;
  const verdicts = tools.map(({ name, sha256, firstUse }): PinVerdict => {
    const pin = entry.tools.get(name);
    if (!pin) {
      if (entry.tools.size >= MAX_PINNED_TOOLS_PER_SERVER || pinned >= MAX_PINNED_TOOLS) return "store_full";
      pinned++;
      const trusted = firstServerVisit || firstUse === true;
      entry.tools.set(
        name,
        trusted
          ? { sha256, firstSeen: now8601, approvedAt: now8601, pending: null }
          : { sha256: null, firstSeen: now8601, approvedAt: null, pending: { sha256, seen: now8601 } },
      );
      changed.add(name);
      return trusted ? "first_use" : "added";
    }
    if (pin.sha256 === sha256) return "pinned";
    if (pin.pending?.sha256 !== sha256) {
      pin.pending = { sha256, seen: now8601 };
      changed.add(name);
    }
    return pin.sha256 === null ? "added" : "changed";
  });
  return { verdicts, changed };
}

/** Accepts the pending definitions of a server's tools (all, or the ones named); the names approved. */
export function approvePins(server: string, entry: ServerPins, toolNames: readonly string[], now: Date): string[] {
  const names = toolNames.length > 0 ? toolNames : [...entry.tools.keys()];
  const approved: string[] = [];
  for (const name of names) {
    const pin = entry.tools.get(name);
    if (!pin) throw new PinStoreError(`server ${server} has no tool ${JSON.stringify(name)}`);
    if (!pin.pending) continue;
    pin.sha256 = pin.pending.sha256;
    pin.approvedAt = now.toISOString();
    pin.pending = null;
    approved.push(name);
  }
  return approved;
}
