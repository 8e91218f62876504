/** Percentiles over latency samples (nearest rank). */
export interface Summary {
  count: number;
  p50: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? null;
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    count: sorted.length,
    p50: round(percentile(sorted, 50)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.length ? (sorted[sorted.length - 1] ?? null) : null),
    mean: round(sorted.length ? sum / sorted.length : null),
  };
}

export function round(x: number | null, digits = 3): number | null {
  if (x === null || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Counts error messages, keeping the text verbatim (first few distinct ones). */
export class ErrorTally {
  readonly counts = new Map<string, number>();
  total = 0;

  add(err: unknown): void {
    this.total++;
    const text = errorText(err);
    if (this.counts.has(text) || this.counts.size < 8) this.counts.set(text, (this.counts.get(text) ?? 0) + 1);
  }

  toJSON(): { total: number; messages: { message: string; count: number }[] } {
    return { total: this.total, messages: [...this.counts].map(([message, count]) => ({ message, count })) };
  }
}

export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    const cause = err.cause instanceof Error ? ` (cause: ${errorText(err.cause)})` : "";
    return `${err.name}${code ? ` ${code}` : ""}: ${err.message}${cause}`;
  }
  return String(err);
}
