import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { JSX } from "preact";
import type { Msg } from "./model.js";
import { callText, durationText, layoutCalls, tickPixels, tickStep, worse, type Call } from "./timeline-layout.js";
import { clockText, dateText, zoneText } from "./time.js";
import { counted } from "./format.js";

const LABEL_W = 120;
const LANE_H = 18;
const BAR_H = 12;
const AXIS_H = 26;
/** Below this a call is drawn this wide, so that an instant is seen; a refused call (over at once) wider. */
const MIN_BAR_PX = 2;
const MIN_DENIED_PX = 7;
/** A mark standing for several calls spans at most this much, so that hovering says how many are where. */
const MAX_CLUSTER_PX = 24;
const MIN_SPAN_MS = 1;

interface View {
  a: number;
  b: number;
}

interface Hover {
  text: string;
  x: number;
  y: number;
}

/**
 * Every shown request as a bar from sent to answered, one band of lanes per session, overlapping calls on
 * lanes of their own; progress notifications as ticks. Only what is in view is drawn, and calls thinner
 * than a pixel on one lane are drawn as one mark (`data-cluster`, the worst outcome among them), so
 * 10,000 calls draw as a few hundred elements. Wheel or the buttons zoom, dragging or shift+wheel pans.
 */
export function Timeline({ rows, onOpen, opened }: { rows: Msg[]; onOpen: (m: Msg) => void; opened: Msg | null }) {
  const layout = useMemo(() => layoutCalls(rows), [rows]);
  const byIndex = useMemo(() => new Map(layout.calls.map((c) => [c.msg.index, c])), [layout]);
  const box = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState({ width: 900, height: 400 });
  const [scrollTop, setScrollTop] = useState(0);
  const [view, setView] = useState<View | null>(null);
  const [hover, setHover] = useState<Hover | null>(null);
  const drag = useRef<{ x: number; view: View; moved: boolean } | null>(null);

  const empty = layout.calls.length === 0;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setSize({ width: el.clientWidth, height: el.clientHeight }));
    ro.observe(el);
    return () => ro.disconnect();
  }, [empty]);

  const pad = Math.max(1, (layout.to - layout.from) * 0.02);
  const full: View = { a: layout.from - pad, b: layout.to + pad };
  const v = view ?? full;
  const plotW = Math.max(50, size.width - LABEL_W - 12);
  const scale = plotW / (v.b - v.a);
  const x = (t: number): number => LABEL_W + (t - v.a) * scale;

  const clamp = (a: number, b: number): View => {
    const span = Math.min(Math.max(b - a, MIN_SPAN_MS), (full.b - full.a) * 4);
    const mid = (a + b) / 2;
    return { a: mid - span / 2, b: mid + span / 2 };
  };
  const zoom = (factor: number, at = (v.a + v.b) / 2): void => {
    setView(clamp(at - (at - v.a) * factor, at + (v.b - at) * factor));
  };
  const pan = (ms: number): void => setView({ a: v.a + ms, b: v.b + ms });

  if (empty) return <p class="empty">No request matches the filter.</p>;

  const firstLane = Math.max(0, Math.floor(scrollTop / LANE_H) - 2);
  const lastLane = Math.min(layout.lanes, Math.ceil((scrollTop + size.height) / LANE_H) + 2);
  const { marks, shown } = drawCalls(layout.calls, firstLane, lastLane, v, x, opened);
  const step = tickStep(v.b - v.a, plotW);
  const ticks: number[] = [];
  for (let t = Math.ceil(v.a / step) * step; t <= v.b && ticks.length < 200; t += step) ticks.push(t);
  const withMs = step < 1000;

  const onWheel = (e: WheelEvent): void => {
    e.preventDefault();
    const rect = (e.currentTarget as HTMLElement).getBoundingClientRect();
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) return pan((e.shiftKey ? e.deltaY : e.deltaX) / scale);
    zoom(Math.exp(e.deltaY * 0.0015), v.a + (e.clientX - rect.left - LABEL_W) / scale);
  };
  const onPointerDown = (e: PointerEvent): void => {
    if (e.button !== 0) return;
    drag.current = { x: e.clientX, view: v, moved: false };
  };
  const onPointerMove = (e: PointerEvent): void => {
    const d = drag.current;
    if (d && (e.buttons & 1) === 1) {
      const dx = e.clientX - d.x;
      if (Math.abs(dx) > 3) d.moved = true;
      if (d.moved) setView({ a: d.view.a - dx / scale, b: d.view.b - dx / scale });
      return;
    }
    const target = (e.target as Element).closest("[data-index],[data-cluster]");
    const rect = box.current!.getBoundingClientRect();
    const at = { x: e.clientX - rect.left + 12, y: e.clientY - rect.top + box.current!.scrollTop + 14 };
    if (!target) return setHover(null);
    const call = byIndex.get(Number(target.getAttribute("data-index")));
    const text = call
      ? `${callText(call, layout.to)} · sent ${clockText(call.start)}`
      : `${counted(Number(target.getAttribute("data-cluster")), "call")} here, the worst ${target.getAttribute("data-outcome")}: zoom in to see each`;
    setHover({ text, ...at });
  };
  const onPointerUp = (e: PointerEvent): void => {
    const d = drag.current;
    drag.current = null;
    if (d?.moved) return;
    const target = (e.target as Element).closest("[data-index]");
    const call = target ? byIndex.get(Number(target.getAttribute("data-index"))) : undefined;
    if (call) onOpen(call.msg);
  };

  return (
    <div class="timeline">
      <div class="timeline-bar">
        <button type="button" onClick={() => zoom(0.5)} title="zoom in (wheel)">
          +
        </button>
        <button type="button" onClick={() => zoom(2)} title="zoom out (wheel)">
          −
        </button>
        <button type="button" onClick={() => pan(-(v.b - v.a) / 3)} title="earlier (drag, shift+wheel)">
          ◀
        </button>
        <button type="button" onClick={() => pan((v.b - v.a) / 3)} title="later (drag, shift+wheel)">
          ▶
        </button>
        <button type="button" onClick={() => setView(null)} title="the whole capture">
          fit
        </button>
        <span class="timeline-count">
          {counted(layout.calls.length, "call")} · {counted(layout.bands.length, "session")} · {shown} in view · {durationText(v.b - v.a)} across · {dateText(v.a)} {zoneText(v.a)}
        </span>
        <span class="legend">
          <i class="o-ok" /> ok <i class="o-error" /> error <i class="o-denied" /> denied <i class="o-pending" /> pending <i class="o-cancelled" /> cancelled <b>|</b> progress
        </span>
      </div>
      <svg class="timeline-axis" width={size.width} height={AXIS_H} aria-hidden="true">
        {ticks.map((t) => (
          <g key={t} transform={`translate(${x(t).toFixed(1)},0)`}>
            <line y1={AXIS_H - 6} y2={AXIS_H} />
            <text y={AXIS_H - 9} text-anchor="middle">
              {clockText(t, withMs)}
            </text>
          </g>
        ))}
      </svg>
      <div
        class="timeline-lanes"
        ref={box}
        onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
        onWheel={onWheel}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerLeave={() => setHover(null)}
      >
        <svg width={size.width} height={layout.lanes * LANE_H} role="img" aria-label={`timeline of ${counted(layout.calls.length, "call")}`}>
          <defs>
            <pattern id="deny-stripes" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
              <rect width="4" height="4" class="deny-bg" />
              <line x1="0" y1="0" x2="0" y2="4" class="deny-line" />
            </pattern>
          </defs>
          {ticks.map((t) => (
            <line key={t} class="grid-line" x1={x(t)} x2={x(t)} y1={firstLane * LANE_H} y2={lastLane * LANE_H} />
          ))}
          {layout.bands
            .filter((b) => b.firstLane + b.lanes > firstLane && b.firstLane < lastLane)
            .map((b) => (
              <g key={b.key} class="band" data-session={b.key}>
                <line class="band-line" x1={0} x2={size.width} y1={b.firstLane * LANE_H} y2={b.firstLane * LANE_H} />
                <text x={6} y={b.firstLane * LANE_H + 13}>
                  <title>{b.title}</title>
                  {b.label} · {counted(b.lanes, "lane")}
                </text>
              </g>
            ))}
          <svg x={LABEL_W} width={plotW} height={layout.lanes * LANE_H} viewBox={`${LABEL_W} 0 ${plotW} ${layout.lanes * LANE_H}`}>
            {marks}
          </svg>
        </svg>
        {hover ? (
          <div class="timeline-tip" style={{ left: `${Math.min(hover.x, size.width - 320)}px`, top: `${hover.y}px` }}>
            {hover.text}
          </div>
        ) : null}
      </div>
    </div>
  );
}

/**
 * The marks of the calls on lanes [first, last) that overlap the view: one bar per call, or one mark for
 * calls that fall within a pixel of each other on a lane.
 */
function drawCalls(calls: readonly Call[], first: number, last: number, v: View, x: (t: number) => number, opened: Msg | null): { marks: JSX.Element[]; shown: number } {
  const marks: JSX.Element[] = [];
  const open = new Map<number, { x0: number; x1: number; calls: Call[] }>();
  let shown = 0;
  const flush = (lane: number): void => {
    const c = open.get(lane);
    if (!c) return;
    open.delete(lane);
    marks.push(c.calls.length === 1 ? bar(c.calls[0]!, c.x0, c.x1, x, opened) : cluster(c.calls, c.x0, c.x1, lane));
  };
  for (const c of calls) {
    if (c.lane < first || c.lane >= last) continue;
    const end = c.end ?? v.b;
    if (end < v.a || c.start > v.b) continue;
    shown++;
    const x0 = Math.max(x(c.start), x(v.a) - 2);
    const x1 = Math.max(x0 + (c.outcome === "denied" ? MIN_DENIED_PX : MIN_BAR_PX), Math.min(x(end), x(v.b) + 2));
    const o = open.get(c.lane);
    if (o && x0 <= o.x1 + 0.5 && o.x1 - o.x0 < MAX_CLUSTER_PX) {
      o.x1 = Math.max(o.x1, x1);
      o.calls.push(c);
      continue;
    }
    flush(c.lane);
    open.set(c.lane, { x0, x1, calls: [c] });
  }
  for (const lane of [...open.keys()]) flush(lane);
  return { marks, shown };
}

function bar(c: Call, x0: number, x1: number, x: (t: number) => number, opened: Msg | null): JSX.Element {
  const y = c.lane * LANE_H + (LANE_H - BAR_H) / 2;
  const w = x1 - x0;
  return (
    <g key={c.msg.index} class={`call o-${c.outcome}${c.end === null ? " open" : ""}${opened === c.msg ? " opened" : ""}`} data-call={c.key} data-index={c.msg.index} data-outcome={c.outcome}>
      <rect class="bar" x={x0} y={y} width={w} height={BAR_H} />
      {w >= 4
        ? tickPixels(c.progress, x).map((px) => <line key={px} class="tick" data-progress={c.key} x1={px} x2={px} y1={y - 2} y2={y + BAR_H + 2} />)
        : null}
      {c.cancelledAt !== null && w >= 4 ? <line class="cancel" x1={x(c.cancelledAt)} x2={x(c.cancelledAt)} y1={y - 2} y2={y + BAR_H + 2} /> : null}
      {w >= 60 ? (
        <text class="bar-label" x={x0 + 3} y={y + BAR_H - 2}>
          {c.tool ?? c.method}
        </text>
      ) : null}
    </g>
  );
}

function cluster(calls: Call[], x0: number, x1: number, lane: number): JSX.Element {
  const outcome = calls.reduce((o, c) => worse(o, c.outcome), calls[0]!.outcome);
  return (
    <g key={`c${lane}-${calls[0]!.msg.index}`} class={`call cluster o-${outcome}`} data-cluster={calls.length} data-outcome={outcome}>
      <rect class="bar" x={x0} y={lane * LANE_H + (LANE_H - BAR_H) / 2} width={x1 - x0} height={BAR_H} />
    </g>
  );
}
