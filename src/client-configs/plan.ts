/**
 * What wrapping or unwrapping does to one config's text, decided without touching any file: the edits, the
 * outcome per server, and a check that the new text reads back as intended before anything is written.
 */
import type { ConfigLocation } from "./clients.js";
import { findJsonEntries, type FoundEntries } from "./json-entries.js";
import { applyEdits } from "./text-edits.js";
import { findTomlEntries } from "./toml-entries.js";
import { bridgedLaunch, type Launcher, type ServerEntry, type TextEdit, unwrappedLaunch, wrappedLaunch } from "./server-entry.js";

export type Action = "wrap" | "unwrap";

/** What `wrap` remembers per entry so that `unwrap` can put back the very bytes it replaced. */
export interface WrapRecord {
  where: string[];
  original: string;
  wrapped: string;
}

export interface EntryOutcome {
  name: string;
  where: string[];
  result: "wrapped" | "bridged" | "unwrapped" | "already wrapped" | "not wrapped" | "left alone";
  note?: string;
}

export interface Plan {
  text: string;
  edits: TextEdit[];
  outcomes: EntryOutcome[];
  notes: string[];
  /** After a wrap: the records of every entry this plan wrapped. */
  records: WrapRecord[];
  /** After an unwrap: the entries whose records are done with. */
  released: string[][];
}

export class PlanError extends Error {}

export function findEntries(text: string, loc: ConfigLocation): FoundEntries {
  return loc.format === "toml" ? findTomlEntries(text, loc.tables) : findJsonEntries(text, loc.tables, loc.client);
}

export const whereKey = (where: readonly string[]): string => JSON.stringify(where);

export interface PlanOptions {
  servers: readonly string[];
  launcher: Launcher;
  records: readonly WrapRecord[];
  /** Route remote (URL) entries through `mcp-wiretap bridge` too. */
  remote?: boolean;
}

export function plan(text: string, loc: ConfigLocation, action: Action, o: PlanOptions): Plan {
  const found = findEntries(text, loc);
  const chosen = found.entries.filter((e) => o.servers.length === 0 || o.servers.includes(e.name));
  const outcomes: EntryOutcome[] = [];
  const edits: TextEdit[] = [];
  const intended = new Map<string, { command: string; args: string[] } | "original">();
  const released: string[][] = [];
  for (const entry of chosen) {
    const outcome = (result: EntryOutcome["result"], note?: string): number => outcomes.push({ name: entry.name, where: entry.where, result, ...(note ? { note } : {}) });
    if (action === "wrap" && entry.kind === "remote" && o.remote && entry.remote && entry.toStdio) {
      const launch = bridgedLaunch(o.launcher, entry.remote);
      edits.push(...entry.toStdio(launch.command, launch.args, launch.env));
      intended.set(whereKey(entry.where), launch);
      outcome("bridged", entry.disabled ? "disabled in the client: stays disabled" : undefined);
      continue;
    }
    if (entry.kind === "unknown" || entry.kind === "remote") {
      if (action === "wrap") outcome("left alone", entry.kind === "remote" && !o.remote && entry.remote ? `${entry.note}; --remote routes it through mcp-wiretap bridge` : entry.note);
      continue;
    }
    if (entry.kind === "bridged") {
      if (action === "wrap") outcome("already wrapped");
      else {
        const record = o.records.find((r) => whereKey(r.where) === whereKey(entry.where));
        if (record && text.slice(entry.start, entry.end) === record.wrapped) {
          released.push(entry.where);
          edits.push({ start: entry.start, end: entry.end, text: record.original });
          intended.set(whereKey(entry.where), "original");
          outcome("unwrapped");
        } else outcome("left alone", `a bridged remote server changed since it was wrapped, or no record of it: restore it from ${loc.file}.mcp-wiretap-backup`);
      }
      continue;
    }
    const disabledNote = entry.disabled ? "disabled in the client: stays disabled" : undefined;
    if (action === "wrap") {
      if (entry.kind === "wrapped") outcome("already wrapped");
      else {
        const launch = wrappedLaunch(o.launcher, entry.name, entry.command!, entry.args!);
        edits.push(...entry.launch(launch.command, launch.args));
        intended.set(whereKey(entry.where), launch);
        outcome("wrapped", disabledNote);
      }
      continue;
    }
    if (entry.kind !== "wrapped") {
      if (o.servers.length > 0) outcome("not wrapped");
      continue;
    }
    const record = o.records.find((r) => whereKey(r.where) === whereKey(entry.where));
    released.push(entry.where);
    if (record && text.slice(entry.start, entry.end) === record.wrapped) {
      edits.push({ start: entry.start, end: entry.end, text: record.original });
      intended.set(whereKey(entry.where), "original");
      outcome("unwrapped");
    } else {
      const launch = unwrappedLaunch(entry.command!, entry.args!)!;
      edits.push(...entry.launch(launch.command, launch.args));
      intended.set(whereKey(entry.where), launch);
      const why = record ? "the entry changed after it was wrapped" : "no record of the entry as it was";
      outcome("unwrapped", `${why}: its command and args are restored, the rest of it is kept as it is now`);
    }
  }
  const newText = applyEdits(text, edits);
  const made = check(text, newText, loc, found, intended, o.records);
  return { text: newText, edits, outcomes, notes: found.notes, records: action === "wrap" ? made : [], released };
}

/**
 * Reads the new text back: every entry not edited must be byte for byte what it was, every edited one must
 * launch what was intended. Returns the wrap records of the edited entries. Throws PlanError otherwise, so a
 * text this module misread is never written.
 */
function check(before: string, after: string, loc: ConfigLocation, old: FoundEntries, intended: Map<string, { command: string; args: string[] } | "original">, records: readonly WrapRecord[]): WrapRecord[] {
  let now: FoundEntries;
  try {
    now = findEntries(after, loc);
  } catch (error) {
    throw new PlanError(`the edited text would not read back (${(error as Error).message}); nothing written`);
  }
  const out: WrapRecord[] = [];
  if (now.entries.length !== old.entries.length) throw new PlanError("the edited text lists a different number of servers; nothing written");
  old.entries.forEach((was, i) => {
    const is = now.entries[i]!;
    const key = whereKey(was.where);
    const wanted = intended.get(key);
    const wasText = before.slice(was.start, was.end);
    const isText = after.slice(is.start, is.end);
    const same = whereKey(is.where) === key;
    if (same && wanted === undefined && isText === wasText) return;
    if (same && wanted === "original" && isText === records.find((r) => whereKey(r.where) === key)?.original) return;
    if (same && typeof wanted === "object" && sameLaunch(is, wanted)) {
      out.push({ where: was.where, original: wasText, wrapped: isText });
      return;
    }
    throw new PlanError(`server "${was.name}" would not read back as intended; nothing written`);
  });
  return out;
}

function sameLaunch(entry: ServerEntry, wanted: { command: string; args: string[] }): boolean {
  return entry.command === wanted.command && JSON.stringify(entry.args) === JSON.stringify(wanted.args);
}
