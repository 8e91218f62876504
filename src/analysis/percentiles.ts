/**
 * Nearest-rank percentile: the smallest value such that at least p% of the values are at or below it
 * (p in (0, 100]). No interpolation, so every figure reported is a value that was measured. Null for none.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

export function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
