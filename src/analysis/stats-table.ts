import { printable } from "../saved-logs/color.js";
import { bytes, clip, clockTime, duration } from "../saved-logs/layout.js";
import type { GroupStats, StatsReport } from "./stats.js";
import { legacySessionId } from "../saved-logs/filters.js";

/** Answers whose request is not in the log (it came before the proxy started, or was not JSON-RPC). */
const UNMATCHED = "(answers without their request)";

const HEADERS = ["CALLS", "ERR", "DENY", "FLAG", "UNANS", "P50", "P95", "P99", "MAX", "REQ", "REQ p95", "RESP", "RESP p95", "FIRST", "LAST"];

/** The report as a table for a terminal: one row per group, then the totals. */
export function statsTable(report: StatsReport): string {
  const rows = [...report.groups.map((g) => cells(label(g, report.by), g)), cells("TOTAL", report.totals)];
  const head = [report.by.toUpperCase(), ...HEADERS];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd();
  if (report.groups.length === 0) return "no calls in the log\n";
  const replays = report.totals.replays > 0 ? `${report.totals.replays} of the calls ${report.totals.replays === 1 ? "is a replay" : "are replays"} (mcp-wiretap replay; tail -v marks them ↻)\n` : "";
  return [line(head), ...rows.slice(0, -1).map(line), line(rows.at(-1)!)].join("\n") + "\n" + replays;
}

function label(g: GroupStats, by: StatsReport["by"]): string {
  const k = g.key;
  const text =
    by === "tool"
      ? [k.method ?? UNMATCHED, k.tool].filter((x) => x !== null).join(" ")
      : by === "method"
        ? (k.method ?? UNMATCHED)
        : by === "server"
          ? (k.server ?? "(unknown)")
          : `${k.session === null || k.session === undefined ? "(no session)" : (legacySessionId(k.session) ?? k.session)} @ ${k.server ?? "?"}`;
  return printable(clip(text, 60));
}

function cells(name: string, g: GroupStats): string[] {
  const n = (v: number): string => (v === 0 ? "-" : String(v));
  const ms = (v: number | null): string => (v === null ? "-" : duration(v));
  const b = (v: number | null): string => (v === null ? "-" : bytes(v));
  return [
    name,
    String(g.calls),
    n(g.errors),
    n(g.denied),
    n(g.flagged),
    n(g.unanswered),
    ms(g.latencyMs.p50),
    ms(g.latencyMs.p95),
    ms(g.latencyMs.p99),
    ms(g.latencyMs.max),
    b(g.requestBytes.total),
    b(g.requestBytes.p95),
    b(g.responseBytes.total),
    b(g.responseBytes.p95),
    clockTime(g.firstSeen),
    clockTime(g.lastSeen),
  ];
}
