/**
 * Visits every string (and object member name, and integer) in a JSON value with its JSON Pointer,
 * without recursion: a hostile 100,000-deep payload must not overflow the stack. Bounded: after
 * `maxStrings` strings, `maxChars` characters of text or `maxNodes` values the walk stops and says
 * where, so the caller can report partial coverage.
 */

export interface WalkLimits {
  maxStrings: number;
  maxChars: number;
  maxNodes: number;
}

export const DEFAULT_WALK_LIMITS: WalkLimits = { maxStrings: 200_000, maxChars: 2_000_000, maxNodes: 2_000_000 };

export interface WalkedText {
  text: string;
  /** JSON Pointer of the value, or for a member name the pointer of its member. */
  path: string;
  kind: "value" | "key" | "number";
  /** Name of the member holding a value; undefined for array items, the root and member names. */
  memberName: string | undefined;
  /** For member names: the pointer of the object that holds the member. */
  parentPath: string;
}

/** Return true from a member-name visit to hide that name in the paths of everything beneath it. */
export type TextVisitor = (item: WalkedText) => boolean | void;

export type WalkOutcome =
  | { complete: true }
  | { complete: false; stoppedAt: string; reason: "strings" | "chars" | "nodes" };

/** Stands in for a member name that itself held something sensitive. */
export const REDACTED_SEGMENT = "<redacted>";

export function escapePointerSegment(segment: string): string {
  if (!segment.includes("~") && !segment.includes("/")) return segment;
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

interface Frame {
  value: unknown;
  path: string;
  memberName: string | undefined;
}

export function walkStrings(
  root: unknown,
  visit: TextVisitor,
  options: { basePath?: string; limits?: Partial<WalkLimits> } = {},
): WalkOutcome {
  const walk = new StringWalk(root, visit, options);
  while (walk.step());
  return walk.outcome!;
}

/**
 * The walk one value at a time: each `step()` takes one value off the stack (visiting it if it is a string or
 * integer, or its member names if it is an object) and says whether there is more. A caller that must not hold
 * the event loop for a whole message (src/policy/sliced-scan.ts) stops between steps; `walkStrings` runs it through.
 */
export class StringWalk {
  private readonly limits: WalkLimits;
  private readonly stack: Frame[];
  private readonly seen = new Set<object>();
  private strings = 0;
  private chars = 0;
  private nodes = 0;
  /** Set once the walk is over (complete or stopped at a limit). */
  outcome: WalkOutcome | undefined;

  constructor(
    root: unknown,
    private readonly visit: TextVisitor,
    options: { basePath?: string; limits?: Partial<WalkLimits> } = {},
  ) {
    this.limits = { ...DEFAULT_WALK_LIMITS, ...options.limits };
    this.stack = [{ value: root, path: options.basePath ?? "", memberName: undefined }];
  }

  /** Visits one text, or returns the reason the budget ran out (after visiting what still fits). */
  private visitText(item: WalkedText): { masked: boolean; stop?: "strings" | "chars" } {
    const limits = this.limits;
    if (this.strings >= limits.maxStrings) return { masked: false, stop: "strings" };
    this.strings++;
    const room = limits.maxChars - this.chars;
    if (item.text.length > room) {
      this.chars = limits.maxChars;
      if (room > 0) this.visit({ ...item, text: item.text.slice(0, room) });
      return { masked: false, stop: "chars" };
    }
    this.chars += item.text.length;
    return { masked: this.visit(item) === true };
  }

  /** One value of the walk; false once it is over (`outcome` is then set). */
  step(): boolean {
    if (this.outcome) return false;
    const frame = this.stack.pop();
    if (!frame) return this.end({ complete: true });
    if (++this.nodes > this.limits.maxNodes) return this.end({ complete: false, stoppedAt: frame.path, reason: "nodes" });
    const { value, path } = frame;

    if (typeof value === "string") {
      const result = this.visitText({ text: value, path, kind: "value", memberName: frame.memberName, parentPath: path });
      if (result.stop) return this.end({ complete: false, stoppedAt: path, reason: result.stop });
      return true;
    }
    if (typeof value === "number") {
      if (Number.isInteger(value)) {
        this.visit({ text: String(value), path, kind: "number", memberName: frame.memberName, parentPath: path });
      }
      return true;
    }
    if (typeof value !== "object" || value === null || ArrayBuffer.isView(value) || this.seen.has(value)) return true;
    this.seen.add(value);

    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        this.stack.push({ value: value[index], path: `${path}/${index}`, memberName: undefined });
      }
      return true;
    }

    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    const children: Frame[] = [];
    for (const key of keys) {
      const memberPath = `${path}/${escapePointerSegment(key)}`;
      const result = this.visitText({ text: key, path: memberPath, kind: "key", memberName: undefined, parentPath: path });
      // The member name may itself be what a detector would hide, so the stop is placed at the object.
      if (result.stop) return this.end({ complete: false, stoppedAt: path, reason: result.stop });
      const childPath = result.masked ? `${path}/${REDACTED_SEGMENT}` : memberPath;
      children.push({ value: record[key], path: childPath, memberName: key });
    }
    for (let index = children.length - 1; index >= 0; index--) this.stack.push(children[index]!);
    return true;
  }

  private end(outcome: WalkOutcome): false {
    this.outcome = outcome;
    return false;
  }
}
