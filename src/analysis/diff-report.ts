import { printable } from "../saved-logs/color.js";
import { duration } from "../saved-logs/layout.js";
import { hunks, lineDiff } from "./line-diff.js";
import type { Change, RunDiff } from "./run-diff.js";

/** The diff for a terminal: per server, tool changes with a line diff of each changed field; then calls. */
export function diffText(d: RunDiff): string {
  const lines: string[] = [];
  let server: string | null = null;
  for (const c of d.changes) {
    if (c.server !== server) {
      server = c.server;
      lines.push(`server ${printable(server)}`);
    }
    lines.push(...changeLines(c).map((l) => `  ${printable(l)}`));
  }
  for (const u of d.unreadable) {
    lines.push(`note: ${u.listings} tools/list result(s) of ${printable(u.server)} in ${u.side === "a" ? "A" : "B"} were not recorded in full (--payloads none, or truncated): their tools are not compared`);
  }
  const improvements = d.changes.length - d.regressions;
  lines.push(d.changes.length === 0 ? "no differences" : `${d.changes.length} difference(s): ${d.regressions} regression(s), ${improvements} other`);
  return lines.join("\n") + "\n";
}

function changeLines(c: Change): string[] {
  const mark = c.regression ? "!" : " ";
  switch (c.type) {
    case "tool_added":
      return [`${mark}+ tool ${c.tool} added`];
    case "tool_removed":
      return [`${mark}- tool ${c.tool} removed`];
    case "tool_changed":
      return [`${mark}~ tool ${c.tool}: ${c.field} changed`, ...hunks(lineDiff(pretty(c.before), pretty(c.after))).map((l) => `      ${l.op} ${l.text}`)];
    case "app_changed":
      return [`${mark}~ app ${c.uri}: HTML or _meta.ui changed (${c.before.slice(0, 19)}… → ${c.after.slice(0, 19)}…)`];
    case "outcome_changed":
      return [`${mark}  ${[c.method, c.tool].filter(Boolean).join(" ")} ${c.argsHash ? `args ${c.argsHash.slice(0, 19)}…` : ""}: ${c.before} → ${c.after} (${c.calls[0]} → ${c.calls[1]} calls${c.replays ? `, ${c.replays[0]} → ${c.replays[1]} of them replays` : ""})`];
    case "latency_changed":
      return [`${mark}  ${[c.method, c.tool].filter(Boolean).join(" ")}: ${c.regression ? "slower" : "faster"}, p50 ${duration(c.beforeP50Ms)} → ${duration(c.afterP50Ms)} (${c.calls[0]} → ${c.calls[1]} calls)`];
  }
}

/** Strings as they are (line by line); other values as JSON with sorted keys, two spaces per level; absent as `(none)`. */
function pretty(value: unknown): string {
  if (value === undefined) return "(none)";
  if (typeof value === "string") return value;
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: unknown, depth = 0): unknown {
  if (depth > 64) return value;
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, depth + 1));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, sortKeys(v, depth + 1)]));
  }
  return value;
}
