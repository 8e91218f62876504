import type { TextFinding } from "./finding.js";

export interface RuleMatch {
  /** Safe description of the match. */
  detail: string;
  /** Where the matched thing really ends, when it reaches past the regex match (e.g. a PEM block). */
  end?: number;
}

export interface PatternRule {
  type: string;
  /** Must carry the `g` flag. Rules earlier in a list win where matches overlap. */
  pattern: RegExp;
  /** Validates a match and describes it; null rejects it. */
  check(match: RegExpExecArray, text: string): RuleMatch | null;
}

/** Beyond this many accepted matches of one rule in one text, the rest are only counted as "more". */
const MAX_MATCHES_PER_RULE = 1000;

interface Span {
  start: number;
  end: number;
}

/** Sorted, non-overlapping spans claimed by earlier (more specific) rules. */
class ClaimedSpans {
  private readonly spans: Span[] = [];

  /** Claims the span unless it overlaps one already claimed. */
  claim(span: Span): boolean {
    const index = this.firstEndingAfter(span.start);
    const next = this.spans[index];
    if (next && next.start < span.end) return false;
    this.spans.splice(index, 0, span);
    return true;
  }

  private firstEndingAfter(position: number): number {
    let low = 0;
    let high = this.spans.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.spans[mid]!.end <= position) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/**
 * Runs the rules over one text and gives one finding per type: the first match's description,
 * plus a count when the same type matched more than once.
 */
export function matchRules(text: string, rules: readonly PatternRule[]): TextFinding[] {
  const claimed = new ClaimedSpans();
  const byType = new Map<string, { detail: string; count: number }>();
  for (const rule of rules) {
    const pattern = rule.pattern;
    pattern.lastIndex = 0;
    let accepted = 0;
    let match: RegExpExecArray | null;
    while (accepted < MAX_MATCHES_PER_RULE && (match = pattern.exec(text)) !== null) {
      if (match[0].length === 0) {
        pattern.lastIndex++;
        continue;
      }
      const result = rule.check(match, text);
      if (!result) continue;
      const span = { start: match.index, end: Math.max(result.end ?? 0, match.index + match[0].length) };
      if (!claimed.claim(span)) continue;
      accepted++;
      const seen = byType.get(rule.type);
      if (seen) seen.count++;
      else byType.set(rule.type, { detail: result.detail, count: 1 });
    }
  }
  return [...byType].map(([type, { detail, count }]) => ({
    type,
    detail: count > 1 ? `${detail} (+${count - 1} more)` : detail,
  }));
}

/** "AKIA…(20 chars)": shows only a prefix that is public by construction (the token's fixed marker). */
export function redactedHint(token: string, visiblePrefix: number): string {
  return `${token.slice(0, visiblePrefix)}…(${token.length} chars)`;
}

/** At most `max` characters, whitespace collapsed, for quoting non-secret text in a detail. */
export function quote(text: string, max = 80): string {
  const flat = text.slice(0, max * 4).replace(/\s+/g, " ").trim();
  if (flat.length <= max) return flat;
  const cut = /[\uD800-\uDBFF]/.test(flat[max - 2]!) ? max - 2 : max - 1; // not between a surrogate pair
  return `${flat.slice(0, cut)}…`;
}
