import type { LogRecord } from "../../saved-logs/filters.js";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { escapeLine } from "../../log/escape-line.js";
import { harEntry } from "./entry.js";
import type { Har, HarEntry } from "./har-format.js";

export type { Har, HarEntry } from "./har-format.js";

export interface HarOptions {
  creator: { name: string; version: string };
  /** Which exchanges to export (an exchange is kept when its http record or one of its messages matches). */
  filter?: (record: LogRecord) => boolean;
  comment?: string;
}

/**
 * HAR 1.2 from log records: one entry per `http` record (exchange), sorted by start time. Headers are the
 * logged ones (already redacted). Bodies are rebuilt from the exchange's `rpc` records, since the log keeps
 * messages, not bytes: the request body from the client's messages (a batch as an array), the response body
 * from the server's — as SSE (`event: message` / `id:` / `data:`) when the response was an event stream,
 * else JSON. Whitespace and member order may differ from the wire. A payload the log truncated or left out
 * is shown as its preview (or nothing) followed by a `[mcp-wiretap: …]` note, and the body's `comment` says
 * so: never invented. A body that carried no MCP (or an answer written by the proxy) is not in the log: no
 * `text`, and a comment.
 */
export function buildHar(records: readonly LogRecord[], opts: HarOptions): Har {
  const steps = harSteps(records, opts);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Exchanges turned into entries between two turns of the event loop, when built in turns. */
const ENTRIES_PER_TURN = 500;

/** `buildHar` a few hundred entries per turn of the event loop: a server building one keeps answering. */
export async function buildHarInTurns(records: readonly LogRecord[], opts: HarOptions): Promise<Har> {
  const steps = harSteps(records, opts);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await yieldToLoop();
  }
}

/** The HAR, pausing (yield) every ENTRIES_PER_TURN entries. */
function* harSteps(records: readonly LogRecord[], opts: HarOptions): Generator<void, Har> {
  const byFlow = new Map<string, LogRecord[]>();
  for (const r of records) {
    if (r.event !== "rpc" || typeof r.flow !== "string") continue;
    const list = byFlow.get(r.flow) ?? [];
    list.push(r);
    byFlow.set(r.flow, list);
  }
  const entries: HarEntry[] = [];
  const exported = new Set<string>();
  for (const r of records) {
    if (r.event !== "http" || typeof r.flow !== "string") continue;
    const messages = byFlow.get(r.flow) ?? [];
    if (opts.filter && !opts.filter(r) && !messages.some(opts.filter)) continue;
    entries.push(harEntry(r, messages));
    exported.add(r.flow);
    if (entries.length % ENTRIES_PER_TURN === 0) yield;
  }
  entries.sort((a, b) => Date.parse(a.startedDateTime) - Date.parse(b.startedDateTime));
  const orphans = [...byFlow.keys()].filter((flow) => !exported.has(flow) && (!opts.filter || byFlow.get(flow)!.some(opts.filter))).length;
  const notes = [opts.comment, orphans > 0 ? `${orphans} exchange(s) with MCP messages but no http record (still open when the log ended?) are not included.` : undefined].filter(Boolean);
  return {
    log: {
      version: "1.2",
      creator: opts.creator,
      entries,
      ...(notes.length > 0 ? { comment: notes.join(" ") } : {}),
    },
  };
}

/**
 * The HAR as written to a file: bidi and other format controls from record strings written `\uXXXX`, as the
 * log writes them, so that a viewer or a terminal showing the file cannot reorder or hide its text.
 */
export function harText(har: Har): string {
  return [...harTextPieces(har)].join("");
}

/** `harText` written a few hundred entries per turn of the event loop. */
export async function harTextInTurns(har: Har): Promise<string> {
  const pieces: string[] = [];
  for (const piece of harTextPieces(har)) {
    pieces.push(piece);
    if (pieces.length % ENTRIES_PER_TURN === 0) await yieldToLoop();
  }
  return pieces.join("");
}

/**
 * `JSON.stringify(har, null, 2)`, escaped, an entry at a time: the frame is written with a stand-in for
 * the entries (a quoted string that no string value holds unescaped) and each entry at its indentation.
 */
function* harTextPieces(har: Har): Generator<string> {
  const entries = har.log.entries;
  const stand = '"mcp-wiretap:entries"';
  const frame = JSON.stringify({ log: { ...har.log, entries: [JSON.parse(stand) as string] } }, null, 2);
  const at = frame.indexOf(stand);
  if (entries.length === 0 || at < 0) {
    yield escapeLine(JSON.stringify(har, null, 2)) + "\n";
    return;
  }
  const indent = "\n" + " ".repeat(at - frame.lastIndexOf("\n", at) - 1);
  yield escapeLine(frame.slice(0, at));
  for (let i = 0; i < entries.length; i++) yield escapeLine(JSON.stringify(entries[i], null, 2).replace(/\n/g, indent)) + (i + 1 < entries.length ? `,${indent}` : "");
  yield escapeLine(frame.slice(at + stand.length)) + "\n";
}
