/**
 * Which recorded call answers a client's call (`--match`):
 * - `exact`: same method and params (`_meta` aside); repeated identical calls are answered in recorded order,
 *   the last answer again once they run out;
 * - `tool`: exact first, else the latest answer of the same tool (or method, for calls without a tool);
 * - `sequence`: the next recorded call, whatever it was, when method and tool agree.
 * No match: the nearest recorded call of the method and the argument paths that differ, to say so.
 */
import { canonicalJson } from "../util/canonical-json.js";
import type { Message, RecordedCall } from "./recording.js";

export const MATCH_MODES = ["exact", "tool", "sequence"] as const;
export type MatchMode = (typeof MATCH_MODES)[number];

export type MatchResult = { call: RecordedCall } | { call: null; explain: string; nearest: RecordedCall | null; differing: string[] };

/** Paths compared at most, walking two params: a bound on what one call costs (promise 3). */
const MAX_PATHS = 1000;

export class CallMatcher {
  private readonly used = new Map<RecordedCall, number>();
  private next = 0;

  constructor(
    private readonly calls: readonly RecordedCall[],
    private readonly mode: MatchMode,
  ) {}

  match(method: string, params: Message | undefined): MatchResult {
    const tool = toolOf(method, params);
    if (this.mode === "sequence") {
      const expected = this.calls[this.next];
      if (expected && expected.method === method && expected.tool === tool) {
        this.next++;
        return { call: expected };
      }
      return this.unmatched(method, tool, params, expected ? `the recorded sequence expects ${describe(expected)} next (call ${this.next + 1} of ${this.calls.length})` : `the recorded sequence of ${this.calls.length} calls is over`);
    }
    const key = canonicalParams(params);
    const exact = this.calls.filter((c) => c.method === method && canonicalParams(c.params) === key);
    if (exact.length > 0) {
      const n = this.used.get(exact[0]!) ?? 0;
      this.used.set(exact[0]!, n + 1);
      return { call: exact[Math.min(n, exact.length - 1)]! };
    }
    if (this.mode === "tool") {
      const same = this.calls.filter((c) => c.method === method && c.tool === tool);
      if (same.length > 0) return { call: same[same.length - 1]! };
    }
    return this.unmatched(method, tool, params, `no recorded ${method}${tool ? ` ${tool}` : ""} has these params (--match ${this.mode})`);
  }

  private unmatched(method: string, tool: string | null, params: Message | undefined, why: string): MatchResult {
    const candidates = this.calls.filter((c) => c.method === method);
    let nearest: RecordedCall | null = null;
    let differing: string[] = [];
    for (const c of candidates) {
      const paths = differingPaths(withoutMeta(c.params), withoutMeta(params));
      // The same tool first, then the fewest differing paths.
      const better = nearest === null || (c.tool === tool && nearest.tool !== tool) || ((c.tool === tool) === (nearest.tool === tool) && paths.length < differing.length);
      if (better) {
        nearest = c;
        differing = paths;
      }
    }
    const explain = nearest
      ? `${why}; nearest recorded call: ${describe(nearest)} (${nearest.selector}), differing at ${differing.join(", ") || "(nothing but _meta)"}`
      : `${why}; the capture holds no ${method} call`;
    return { call: null, explain, nearest, differing };
  }
}

export function toolOf(method: string, params: Message | undefined): string | null {
  if (method !== "tools/call" && method !== "prompts/get") return null;
  return typeof params?.name === "string" ? params.name : null;
}

function describe(c: RecordedCall): string {
  return `${c.method}${c.tool ? ` ${c.tool}` : ""}`;
}

function withoutMeta(params: Message | undefined): Message {
  if (!params) return {};
  const { _meta: _ignored, ...rest } = params;
  return rest;
}

function canonicalParams(params: Message | undefined): string {
  return canonical(withoutMeta(params));
}

/** Canonical JSON, or a text no JSON can be for what has none (absent, too deep, a cycle). */
function canonical(value: unknown): string {
  if (value === undefined) return "\u0000absent";
  try {
    return canonicalJson(value);
  } catch {
    // Never equal to anything, itself included: a value that cannot be compared matches nothing.
    return `\u0000unreadable ${++unreadable}`;
  }
}

let unreadable = 0;

/** Levels walked into two params; deeper, the rest is compared whole. */
const MAX_DEPTH = 64;

/** Dotted paths where two JSON values differ (a member on one side only counts), at most MAX_PATHS. */
export function differingPaths(a: unknown, b: unknown, path = "", out: string[] = [], depth = 0): string[] {
  if (out.length >= MAX_PATHS) return out;
  const objA = a !== null && typeof a === "object";
  const objB = b !== null && typeof b === "object";
  if (!objA || !objB || Array.isArray(a) !== Array.isArray(b) || depth >= MAX_DEPTH) {
    if (canonical(a) !== canonical(b)) out.push(path || "(params)");
    return out;
  }
  const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
  for (const k of [...keys].sort()) differingPaths((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k, out, depth + 1);
  return out;
}
