export interface DiffLine {
  op: " " | "+" | "-";
  text: string;
}

/**
 * Line diff of two texts by longest common subsequence. Written here because it is a dozen lines and
 * tool definitions are small; past MAX_CELLS it falls back to "all removed, all added".
 */
const MAX_CELLS = 4_000_000;

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length * b.length > MAX_CELLS) return [...a.map((text) => ({ op: "-" as const, text })), ...b.map((text) => ({ op: "+" as const, text }))];
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      (lcs[i] as number[])[j] = a[i] === b[j] ? ((lcs[i + 1] as number[])[j + 1] as number) + 1 : Math.max((lcs[i + 1] as number[])[j] as number, (lcs[i] as number[])[j + 1] as number);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: " ", text: a[i] as string });
      i++;
      j++;
    } else if (((lcs[i + 1] as number[])[j] as number) >= ((lcs[i] as number[])[j + 1] as number)) {
      out.push({ op: "-", text: a[i++] as string });
    } else {
      out.push({ op: "+", text: b[j++] as string });
    }
  }
  while (i < a.length) out.push({ op: "-", text: a[i++] as string });
  while (j < b.length) out.push({ op: "+", text: b[j++] as string });
  return out;
}
