import { counted } from "./format.js";
import { clockText } from "./time.js";

/** Latency bin edges (ms): 1, 2, 5 times powers of ten, so that a bin reads as a round range. */
const EDGES = [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7];
const W = 168;
const H = 34;
const LABEL_H = 10;

export interface Bin {
  label: string;
  count: number;
  /** Calls with no latency: no answer (yet), cancelled, or refused with no answer logged. */
  none?: boolean;
}

/**
 * A tool's calls by latency: one bin per round range from the fastest to the slowest, and one for the calls
 * that have no latency, so that the bins add up to the calls.
 */
export function latencyBins(latencies: readonly number[], calls: number): Bin[] {
  const counts = new Array<number>(EDGES.length).fill(0);
  let lo = EDGES.length;
  let hi = -1;
  for (const v of latencies) {
    let i = EDGES.length - 1;
    while (i > 0 && EDGES[i]! > v) i--;
    counts[i]!++;
    lo = Math.min(lo, i);
    hi = Math.max(hi, i);
  }
  const bins: Bin[] = [];
  for (let i = lo; i <= hi; i++) bins.push({ label: i + 1 < EDGES.length ? `${msShort(EDGES[i]!)}–${msShort(EDGES[i + 1]!)}` : `≥ ${msShort(EDGES[i]!)}`, count: counts[i]! });
  const none = calls - latencies.length;
  if (none > 0) bins.push({ label: "no latency", count: none, none: true });
  return bins;
}

/** A tool's calls counted in `n` equal spans of [from, to]. */
export function timeBins(times: readonly number[], from: number, to: number, n = 24): Bin[] {
  const span = Math.max(1, to - from);
  const counts = new Array<number>(n).fill(0);
  for (const t of times) counts[Number.isFinite(t) ? Math.min(n - 1, Math.max(0, Math.floor(((t - from) / span) * n))) : 0]!++;
  return counts.map((count, i) => ({ label: `${clockText(from + (span * i) / n, false)}–${clockText(from + (span * (i + 1)) / n, false)}`, count }));
}

const msShort = (ms: number): string => (ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`);

/** Bars of `bins`, heights relative to the largest; each names its range and count on hover. */
export function BinChart({ bins, kind, first, last }: { bins: Bin[]; kind: "latency" | "time"; first: string; last: string }) {
  const max = Math.max(1, ...bins.map((b) => b.count));
  // A few bins stay narrow bars, not blocks: the width says nothing.
  const slot = Math.min(28, W / Math.max(1, bins.length));
  const plotH = H - LABEL_H;
  return (
    <svg class={`bins bins-${kind}`} width={W} height={H} role="img" aria-label={bins.map((b) => `${b.label}: ${counted(b.count, "call")}`).join(", ")}>
      <line class="base" x1={0} x2={W} y1={plotH + 0.5} y2={plotH + 0.5} />
      {bins.map((b, i) => {
        const h = b.count === 0 ? 0 : Math.max(1.5, (b.count / max) * (plotH - 2));
        return (
          <rect key={i} class={b.none ? "bin none" : "bin"} data-bin={b.label} data-count={b.count} x={i * slot + 0.5} y={plotH - h} width={Math.max(1, slot - 1)} height={h}>
            <title>{`${b.label}: ${counted(b.count, "call")}`}</title>
          </rect>
        );
      })}
      <text x={0} y={H - 1}>
        {first}
      </text>
      <text x={Math.min(W, (kind === "latency" ? bins.filter((b) => !b.none).length : bins.length) * slot)} y={H - 1} text-anchor="end">
        {last}
      </text>
    </svg>
  );
}

export function LatencyChart({ latencies, calls }: { latencies: readonly number[]; calls: number }) {
  const bins = latencyBins(latencies, calls);
  if (bins.length === 0) return null;
  const timed = bins.filter((b) => !b.none);
  // The range from the first bar's start to the last's end; a single bar's own range.
  if (timed.length <= 1) return <BinChart bins={bins} kind="latency" first={timed[0]?.label ?? ""} last="" />;
  return <BinChart bins={bins} kind="latency" first={timed[0]!.label.split("–")[0]!} last={timed[timed.length - 1]!.label.split("–")[1] ?? ""} />;
}

export function CallsOverTime({ times, from, to }: { times: readonly number[]; from: number; to: number }) {
  return <BinChart bins={timeBins(times, from, to)} kind="time" first={clockText(from, false)} last={clockText(to, false)} />;
}
