/**
 * A line diff (longest common subsequence) of two short texts — tool descriptions and schemas pretty-printed —
 * written here because it is a few lines and no diff package is among the dependencies. One for the reports
 * and the web UI. Texts whose table would pass `MAX_CELLS` (lines of one × lines of the other: the table is
 * quadratic, 4 bytes a cell) are shown whole, old then new, rather than diffed.
 */
export const MAX_CELLS = 4_000_000;

export type DiffLine = { op: " " | "-" | "+"; text: string };

export function lineDiff(a: string, b: string): DiffLine[] {
  const x = a.split("\n");
  const y = b.split("\n");
  if (x.length * y.length > MAX_CELLS) return [...x.map((text) => ({ op: "-" as const, text })), ...y.map((text) => ({ op: "+" as const, text }))];
  const n = x.length;
  const m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) {
      out.push({ op: " ", text: x[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: "-", text: x[i++]! });
    else out.push({ op: "+", text: y[j++]! });
  }
  while (i < n) out.push({ op: "-", text: x[i++]! });
  while (j < m) out.push({ op: "+", text: y[j++]! });
  return out;
}

/** Only the changed lines and `context` unchanged lines around each change; `…` where lines are left out. */
export function hunks(lines: readonly DiffLine[], context = 2): DiffLine[] {
  const keep = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.op === " ") return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const out: DiffLine[] = [];
  let skipped = false;
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (skipped) out.push({ op: " ", text: "…" });
      skipped = false;
      out.push(l);
    } else skipped = true;
  });
  if (skipped && out.length > 0) out.push({ op: " ", text: "…" });
  return out;
}
