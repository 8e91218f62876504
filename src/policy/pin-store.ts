import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { UsageError } from "../util/usage-error.js";

export interface ToolPin {
  /** sha256 of the canonical definition the user trusts (null: never approved, only seen). */
  sha256: string | null;
  firstSeen: string;
  approvedAt: string | null;
  /** A definition seen since that differs from the pinned one: what `pins approve` would accept. */
  pending: { sha256: string; seen: string } | null;
}

interface PinFile {
  version: 1;
  servers: Record<string, { firstSeen?: string; tools: Record<string, ToolPin> }>;
}

/** Tools first seen this soon after their server count as first use too: a paginated tools/list spans several results. */
const FIRST_USE_WINDOW_MS = 60_000;

export class PinStoreError extends UsageError {}

/** Trust-on-first-use pins of tool definitions, per server; a JSON file, mode 0600. */
export class PinStore {
  private data: PinFile;
  /** Identity of the file as last read or written: another process (`pins approve`) may rewrite it. */
  private stamp: string | null;

  constructor(readonly file: string) {
    this.stamp = PinStore.stampOf(file);
    this.data = PinStore.read(file);
  }

  private static stampOf(file: string): string | null {
    try {
      const s = statSync(file);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return null;
    }
  }

  /** Takes the file's version when someone else changed it, so an approval is seen (and not overwritten). */
  private refresh(): void {
    const stamp = PinStore.stampOf(this.file);
    if (stamp === this.stamp) return;
    try {
      this.data = PinStore.read(this.file);
      this.stamp = stamp;
    } catch {
      // Unreadable now: keep what we have; the next save replaces it.
    }
  }

  private static read(file: string): PinFile {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, servers: {} };
      throw new PinStoreError(`${file}: cannot read the pin store (${(err as NodeJS.ErrnoException).code})`);
    }
    try {
      const parsed = JSON.parse(text) as PinFile;
      if (parsed.version !== 1 || typeof parsed.servers !== "object" || parsed.servers === null) throw new Error("unknown format");
      return parsed;
    } catch (err) {
      throw new PinStoreError(`${file}: not a pin store (${(err as Error).message}); move it away to start over`);
    }
  }

  hasServer(server: string): boolean {
    return server in this.data.servers;
  }

  servers(): string[] {
    return Object.keys(this.data.servers).sort();
  }

  tools(server: string): Record<string, ToolPin> {
    return this.data.servers[server]?.tools ?? {};
  }

  /** Records a definition; says whether it is the pinned one, a change, or a tool new to this server. */
  observe(server: string, tool: string, sha256: string, now: Date): "pinned" | "first_use" | "changed" | "added" {
    this.refresh();
    const now8601 = now.toISOString();
    const entry = (this.data.servers[server] ??= { firstSeen: now8601, tools: {} });
    const firstServerVisit = now.getTime() - Date.parse(entry.firstSeen ?? now8601) <= FIRST_USE_WINDOW_MS;
    const tools = entry.tools;
    const pin = tools[tool];
    if (!pin) {
      tools[tool] = firstServerVisit
        ? { sha256, firstSeen: now8601, approvedAt: now8601, pending: null }
        : { sha256: null, firstSeen: now8601, approvedAt: null, pending: { sha256, seen: now8601 } };
      this.save();
      return firstServerVisit ? "first_use" : "added";
    }
    if (pin.sha256 === sha256) return "pinned";
    if (pin.pending?.sha256 !== sha256) {
      pin.pending = { sha256, seen: now8601 };
      this.save();
    }
    return pin.sha256 === null ? "added" : "changed";
  }

  /** Accepts the pending definitions of a server's tools (all, or the ones named). */
  approve(server: string, toolNames: readonly string[], now: Date): string[] {
    const entry = this.data.servers[server];
    if (!entry) throw new PinStoreError(`no pins for server ${server}`);
    const names = toolNames.length > 0 ? toolNames : Object.keys(entry.tools);
    const approved: string[] = [];
    for (const name of names) {
      const pin = entry.tools[name];
      if (!pin) throw new PinStoreError(`server ${server} has no tool ${JSON.stringify(name)}`);
      if (!pin.pending) continue;
      pin.sha256 = pin.pending.sha256;
      pin.approvedAt = now.toISOString();
      pin.pending = null;
      approved.push(name);
    }
    this.save();
    return approved;
  }

  private save(): void {
    const tmp = path.join(path.dirname(this.file), `.${path.basename(this.file)}.${randomBytes(6).toString("hex")}.tmp`);
    const fd = openSync(tmp, "wx", 0o600);
    try {
      writeSync(fd, `${JSON.stringify(this.data, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
    this.stamp = PinStore.stampOf(this.file);
  }
}
