/** Applying replacements to a text, and showing them as a unified diff (what --dry-run prints). */
import type { TextEdit } from "./server-entry.js";

/** Edits must not overlap; they are applied as if all at once. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = "";
  let at = 0;
  for (const e of sorted) {
    if (e.start < at) throw new Error("overlapping edits");
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

const CONTEXT = 3;

/**
 * A unified diff of the edits, built from where they are rather than by comparing the texts, so a large file
 * (Claude Code's user file grows to megabytes) costs only the lines around each change.
 */
export function unifiedDiff(label: string, text: string, edits: readonly TextEdit[]): string {
  if (edits.length === 0) return "";
  const oldLines = splitLines(text);
  const lineOf = lineIndex(text);
  // The whole lines each edit touches, merged when two edits touch the same line.
  const blocks: Array<{ from: number; to: number; edits: TextEdit[] }> = [];
  for (const e of [...edits].sort((a, b) => a.start - b.start)) {
    const from = lineOf(e.start);
    const to = Math.max(from, lineOf(e.end > e.start ? e.end - 1 : e.start)) + 1;
    const last = blocks.at(-1);
    if (last && from < last.to) {
      last.to = Math.max(last.to, to);
      last.edits.push(e);
    } else blocks.push({ from, to, edits: [e] });
  }
  // Hunks: blocks whose context would meet are shown together, the lines between them as context.
  const hunks: Array<typeof blocks> = [];
  for (const b of blocks) {
    const last = hunks.at(-1);
    if (last && b.from - last.at(-1)!.to <= 2 * CONTEXT) last.push(b);
    else hunks.push([b]);
  }
  let out = `--- ${label}\n+++ ${label}\n`;
  let shift = 0;
  for (const hunk of hunks) {
    const first = hunk[0]!.from;
    const from = Math.max(0, first - CONTEXT);
    const end = Math.min(oldLines.length, hunk.at(-1)!.to + CONTEXT);
    const lines: string[] = [];
    let oldCount = 0;
    let newCount = 0;
    const context = (a: number, b: number): void => {
      for (const l of oldLines.slice(a, b)) lines.push(` ${l}`);
      oldCount += Math.max(0, Math.min(b, oldLines.length) - a);
      newCount += Math.max(0, Math.min(b, oldLines.length) - a);
    };
    context(from, first);
    hunk.forEach((b, k) => {
      if (k > 0) context(hunk[k - 1]!.to, b.from);
      const startOffset = offsetOfLine(text, b.from);
      const endOffset = offsetOfLine(text, b.to);
      const before = oldLines.slice(b.from, b.to);
      const after = splitLines(applyEdits(text.slice(startOffset, endOffset), b.edits.map((e) => ({ ...e, start: e.start - startOffset, end: e.end - startOffset }))));
      lines.push(...before.map((l) => `-${l}`), ...after.map((l) => `+${l}`));
      oldCount += before.length;
      newCount += after.length;
    });
    context(hunk.at(-1)!.to, end);
    out += `@@ -${from + 1},${oldCount} +${from + 1 + shift},${newCount} @@\n${lines.join("\n")}\n`;
    shift += newCount - oldCount;
  }
  return out;
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.map((l) => l.replace(/\r$/, ""));
}

function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
}

function offsetOfLine(text: string, line: number): number {
  let at = 0;
  for (let i = 0; i < line; i++) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return at;
}
