import { legacySessionId, obj, str } from "../../saved-logs/filters.js";
import { idText } from "./format.js";
import type { GroupStatus, Msg } from "./model.js";

/** One request on the timeline: from sent to answered, with its progress notifications. */
export interface Call {
  msg: Msg;
  /** `flow#id`: what the drawn bar carries as `data-call`. */
  key: string;
  start: number;
  /** When the answer came; null while there is none (drawn to the end of the capture). */
  end: number | null;
  outcome: GroupStatus;
  progress: number[];
  cancelledAt: number | null;
  method: string;
  tool: string | null;
  /** Its row, counted over every session's lanes. */
  lane: number;
}

/** The lanes of one session (server and session id), overlapping calls each on a lane of its own. */
export interface Band {
  key: string;
  label: string;
  title: string;
  firstLane: number;
  lanes: number;
}

export interface TimelineLayout {
  calls: Call[];
  bands: Band[];
  lanes: number;
  from: number;
  to: number;
}

const timeOf = (m: Msg | null | undefined): number => (m ? Date.parse(str(m.record.time) ?? "") : NaN);

/** The calls among `rows` (each request exchange whose request is shown), laid out by session and overlap. */
export function layoutCalls(rows: readonly Msg[]): TimelineLayout {
  const calls: (Call & { band: string })[] = [];
  let from = Infinity;
  let to = -Infinity;
  for (const m of rows) {
    const g = m.group;
    if (!g || g.request !== m) continue;
    const start = timeOf(m);
    if (Number.isNaN(start)) continue;
    const answered = timeOf(g.answer);
    const end = Number.isNaN(answered) ? null : Math.max(start, answered);
    const progress: number[] = [];
    let cancelledAt: number | null = null;
    for (const a of g.asides) {
      const method = str(a.record.method);
      const t = timeOf(a);
      if (Number.isNaN(t)) continue;
      if (method === "notifications/progress") progress.push(t);
      else if (method === "notifications/cancelled") cancelledAt ??= t;
      to = Math.max(to, t);
    }
    const r = m.record;
    // A request the policy refused is over when it is refused; a cancelled one, when it is cancelled.
    const over = end ?? (g.status === "denied" ? start : g.status === "cancelled" ? cancelledAt : null);
    // An initialize request goes out before the server names the session: it belongs to the one its answer names.
    const session = str(r.session) ?? str(g.answer?.record.session);
    from = Math.min(from, start);
    to = Math.max(to, over ?? start);
    calls.push({
      msg: m,
      key: `${str(r.flow) ?? ""}#${idText(r.id)}`,
      start,
      end: over,
      outcome: g.status,
      progress,
      cancelledAt,
      method: str(r.method) ?? "",
      tool: str(r.tool),
      lane: 0,
      band: `${str(r.server) ?? ""}|${session ?? ""}`,
    });
  }
  calls.sort((a, b) => a.start - b.start || a.msg.index - b.msg.index);
  // Lanes per session, greedily: a call takes the first lane free by its start (an open call keeps its lane).
  const laneEnds = new Map<string, number[]>();
  const order: string[] = [];
  for (const c of calls) {
    let ends = laneEnds.get(c.band);
    if (!ends) {
      ends = [];
      laneEnds.set(c.band, ends);
      order.push(c.band);
    }
    let lane = ends.findIndex((e) => e < c.start);
    if (lane < 0) lane = ends.push(0) - 1;
    ends[lane] = c.end ?? Infinity;
    if (c.end === c.start) ends[lane] = c.start + 1e-6;
    c.lane = lane;
  }
  const bands: Band[] = [];
  let lanes = 0;
  for (const key of order) {
    const [server, session] = splitBand(key);
    const count = laneEnds.get(key)!.length;
    bands.push({ key, label: session ? (legacySessionId(session) ?? session).slice(0, 8) : "(no session)", title: `${server} ${session || "(no session)"}`, firstLane: lanes, lanes: count });
    lanes += count;
  }
  const first = new Map(bands.map((b) => [b.key, b.firstLane]));
  for (const c of calls) c.lane += first.get(c.band)!;
  if (calls.length === 0) return { calls, bands, lanes, from: 0, to: 1 };
  return { calls, bands, lanes, from, to: Math.max(to, from + 1) };
}

function splitBand(key: string): [string, string] {
  const bar = key.lastIndexOf("|");
  return [key.slice(0, bar), key.slice(bar + 1)];
}

/** The worse of two outcomes, for a mark that stands for several calls. */
const RANK: Record<GroupStatus, number> = { denied: 5, error: 4, unanswered: 3, cancelled: 2, pending: 1, ok: 0 };
export const worse = (a: GroupStatus, b: GroupStatus): GroupStatus => (RANK[b] > RANK[a] ? b : a);

/**
 * Where a call's progress ticks go: one per pixel column at most. A server may send any number of
 * notifications; more lines than the bar has pixels show nothing more and cost the tab each redraw.
 */
export function tickPixels(times: readonly number[], x: (t: number) => number): number[] {
  const columns = new Set<number>();
  for (const t of times) columns.add(Math.round(x(t)));
  return [...columns];
}

/** Tick spacing for an axis of `span` ms over `px` pixels: 1, 2 or 5 times a power of ten ms, about 110 px apart. */
export function tickStep(span: number, px: number): number {
  const raw = (span / Math.max(1, px)) * 110;
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 108e5, 216e5, 432e5, 864e5];
  for (const s of steps) if (s >= raw) return s;
  return Math.ceil(raw / 864e5) * 864e5;
}

/** `12 ms`, `1.25 s`, `2 min 5 s`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** What hovering a call says: its method and tool, how long it took and how it ended. */
export function callText(c: Call, captureEnd: number): string {
  const took = c.end === null ? `${durationText(captureEnd - c.start)} so far` : durationText(c.end - c.start);
  const progress = c.progress.length > 0 ? ` · ${c.progress.length} progress notification${c.progress.length === 1 ? "" : "s"}` : "";
  const rules = obj(c.msg.record.decision)?.rules;
  const rule = Array.isArray(rules) ? obj(rules[0]) : null;
  const reason = c.outcome === "denied" && rule ? ` (${[str(rule.name), str(rule.reason)].filter(Boolean).join(": ")})` : "";
  return `${c.method}${c.tool ? ` ${c.tool}` : ""} · ${took} · ${c.outcome}${reason}${progress}`;
}
