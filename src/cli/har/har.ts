import type { LogRecord } from "../../saved-logs/filters.js";
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
  return escapeLine(JSON.stringify(har, null, 2)) + "\n";
}
