import type { TextFinding, TextScanner } from "./finding.js";

/**
 * Characters a human reviewer does not see but a model reads: Unicode tag characters (ASCII
 * smuggling), zero-width and bidi controls, terminal escape sequences, raw control characters,
 * and variation-selector runs (byte smuggling). Legitimate uses are left alone where the context
 * shows them: emoji flag and ZWJ sequences, joiners inside scripts that need them, LRM/RLM in
 * right-to-left text, one variation selector after a base character.
 */

export type HiddenType =
  | "tag_characters"
  | "zero_width"
  | "bidi_control"
  | "ansi_escape"
  | "control_character"
  | "variation_selectors";

export interface HiddenSpan {
  type: HiddenType;
  start: number;
  end: number;
  /** The smuggled text, for tag characters and variation-selector runs that decode to text. */
  decoded?: string;
}

/** Every code point that can start a span; text without one is skipped at once. */
const CANDIDATE =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFE00-\uFE0F\uFEFF]|\uDB40[\uDC00-\uDC7F\uDD00-\uDDEF]/g;

const isTag = (cp: number) => cp >= 0xe0000 && cp <= 0xe007f;
const isVariationSelector = (cp: number) => (cp >= 0xfe00 && cp <= 0xfe0f) || (cp >= 0xe0100 && cp <= 0xe01ef);
const isZeroWidth = (cp: number) =>
  (cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp === 0x180e || cp === 0xfeff;
const isEmbeddingControl = (cp: number) => (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
const isMark = (cp: number) => cp === 0x200e || cp === 0x200f;
const isControl = (cp: number) =>
  (cp <= 0x1f && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0x7f && cp <= 0x9f);

const RTL_LETTER = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Adlam}]/u;
/** Scripts whose spelling needs ZWJ/ZWNJ between letters (Persian, Indic conjuncts, Khmer…). */
const JOINING_SCRIPT =
  /[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}\p{Script=Malayalam}\p{Script=Sinhala}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Mongolian}\p{Script=Tibetan}]/u;
const PICTOGRAPHIC = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]/u;
const HAN = /[\p{Script=Han}\p{Script=Hangul}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/** CSI, OSC, DCS/SOS/PM/APC strings and two-character escapes, or 8-bit CSI. */
const ANSI_SEQUENCE =
  /\u001B(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001B]{0,4096}(?:\u0007|\u001B\\)?|[PX^_][^\u001B]{0,4096}(?:\u001B\\)?|[ -/]*[0-~])?|\u009B[0-?]*[ -/]*[@-~]/y;

function codePointBefore(text: string, index: number): number | undefined {
  if (index <= 0) return undefined;
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.codePointAt(index - 2);
  }
  return low;
}

const charOf = (cp: number | undefined) => (cp === undefined ? "" : String.fromCodePoint(cp));

/** End of the run of code points satisfying `test`, starting at `start`. */
function runEnd(text: string, start: number, test: (cp: number) => boolean): number {
  let index = start;
  while (index < text.length) {
    const cp = text.codePointAt(index)!;
    if (!test(cp)) break;
    index += cp > 0xffff ? 2 : 1;
  }
  return index;
}

function codePoints(text: string, start: number, end: number): number[] {
  const points: number[] = [];
  for (let index = start; index < end; ) {
    const cp = text.codePointAt(index)!;
    points.push(cp);
    index += cp > 0xffff ? 2 : 1;
  }
  return points;
}

/** 🏴 + 2–6 tag letters/digits + CANCEL TAG: a subdivision flag (England, Scotland, Wales). */
function isEmojiTagSequence(text: string, start: number, points: number[]): boolean {
  if (codePointBefore(text, start) !== 0x1f3f4 || points.length < 3 || points.length > 7) return false;
  if (points.at(-1) !== 0xe007f) return false;
  return points.slice(0, -1).every((cp) => (cp >= 0xe0030 && cp <= 0xe0039) || (cp >= 0xe0061 && cp <= 0xe007a));
}

function decodeTags(points: number[]): string {
  return points
    .filter((cp) => cp >= 0xe0020 && cp <= 0xe007e)
    .map((cp) => String.fromCharCode(cp - 0xe0000))
    .join("");
}

/** Emoji smuggling maps VS1–VS16 to bytes 0–15 and VS17–VS256 to 16–255. */
function decodeVariationSelectors(points: number[]): string | undefined {
  const bytes = Uint8Array.from(points, (cp) => (cp <= 0xfe0f ? cp - 0xfe00 : cp - 0xe0100 + 16));
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const printable = text.replace(/[^\p{L}\p{N}\p{P}\p{S}\p{Zs}]/gu, "").length;
  return text.length > 0 && printable / text.length >= 0.8 ? text : undefined;
}

function zeroWidthIsLegitimate(text: string, start: number, end: number, cp: number): boolean {
  if (cp === 0xfeff) return start === 0 && end === 1; // byte order mark
  if (end - start !== 1 || (cp !== 0x200c && cp !== 0x200d)) return false;
  const before = charOf(codePointBefore(text, start));
  const after = charOf(text.codePointAt(end));
  if (cp === 0x200d && PICTOGRAPHIC.test(before) && PICTOGRAPHIC.test(after)) return true;
  return JOINING_SCRIPT.test(before) && JOINING_SCRIPT.test(after);
}

export function findHidden(text: string): HiddenSpan[] {
  const spans: HiddenSpan[] = [];
  let rtl: boolean | undefined;
  CANDIDATE.lastIndex = 0;
  let candidate: RegExpExecArray | null;
  while ((candidate = CANDIDATE.exec(text)) !== null) {
    const start = candidate.index;
    const cp = text.codePointAt(start)!;
    let end = start + (cp > 0xffff ? 2 : 1);
    if (isTag(cp)) {
      end = runEnd(text, start, isTag);
      const points = codePoints(text, start, end);
      if (!isEmojiTagSequence(text, start, points)) {
        spans.push({ type: "tag_characters", start, end, decoded: decodeTags(points) });
      }
    } else if (isVariationSelector(cp)) {
      end = runEnd(text, start, isVariationSelector);
      const points = codePoints(text, start, end);
      const lone = points.length === 1;
      const legitimate = lone && (cp <= 0xfe0f || HAN.test(charOf(codePointBefore(text, start))));
      if (!legitimate) spans.push({ type: "variation_selectors", start, end, decoded: decodeVariationSelectors(points) });
    } else if (cp === 0x1b || cp === 0x9b) {
      ANSI_SEQUENCE.lastIndex = start;
      const sequence = ANSI_SEQUENCE.exec(text);
      end = start + Math.max(1, sequence?.[0].length ?? 1);
      spans.push({ type: "ansi_escape", start, end });
    } else if (isControl(cp)) {
      spans.push({ type: "control_character", start, end });
    } else if (isZeroWidth(cp)) {
      end = runEnd(text, start, isZeroWidth);
      if (!zeroWidthIsLegitimate(text, start, end, cp)) spans.push({ type: "zero_width", start, end });
    } else if (isEmbeddingControl(cp)) {
      spans.push({ type: "bidi_control", start, end });
    } else if (isMark(cp)) {
      rtl ??= RTL_LETTER.test(text);
      if (!rtl) spans.push({ type: "bidi_control", start, end });
    }
    CANDIDATE.lastIndex = end;
  }
  return spans;
}

/** Removing a span can join what it separated into a new one (VS16, tag, VS16 → a run of two selectors). */
const MAX_STRIP_PASSES = 16;

/** The text with every span `findHidden` reports removed, again until none is left. */
export function stripHidden(text: string): string {
  let current = text;
  for (let pass = 0; pass < MAX_STRIP_PASSES; pass++) {
    const spans = findHidden(current);
    if (spans.length === 0) return current;
    let result = "";
    let position = 0;
    for (const span of spans) {
      result += current.slice(position, span.start);
      position = span.end;
    }
    current = result + current.slice(position);
  }
  return current;
}

const MAX_DECODED = 200;

function visible(text: string): string {
  return text.replace(/[\u0000-\u001F\u007F-\u009F]/g, (char) =>
    char === "\u001B" ? "ESC" : `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`,
  );
}

function describe(type: HiddenType, group: HiddenSpan[], text: string): string {
  const count = group.length;
  const first = group[0]!;
  const more = count > 1 ? ` (+${count - 1} more)` : "";
  const codes = (span: HiddenSpan) =>
    codePoints(text, span.start, Math.min(span.end, span.start + 16))
      .map((cp) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`)
      .join(" ");
  switch (type) {
    case "tag_characters":
    case "variation_selectors": {
      let decoded = "";
      for (const span of group) {
        if (decoded.length > MAX_DECODED) break;
        if (span.decoded) decoded += decoded === "" ? span.decoded : ` | ${span.decoded}`;
      }
      const shown = decoded.length > MAX_DECODED ? `${decoded.slice(0, MAX_DECODED)}…` : decoded;
      if (shown.trim() !== "") return `decoded: ${visible(shown)}`;
      return `${first.end - first.start} code units: ${codes(first)}${more}`;
    }
    case "ansi_escape":
      return `${visible(text.slice(first.start, Math.min(first.end, first.start + 40)))}${more}`;
    default:
      return `${codes(first)}${more}`;
  }
}

export const hiddenTextScanner: TextScanner = {
  name: "hiddenText",
  scanText(text, context): TextFinding[] {
    if (context.kind === "number") return [];
    const byType = new Map<HiddenType, HiddenSpan[]>();
    for (const span of findHidden(text)) {
      const group = byType.get(span.type);
      if (group) group.push(span);
      else byType.set(span.type, [span]);
    }
    return [...byType].map(([type, group]) => ({ type, detail: describe(type, group, text) }));
  },
};
