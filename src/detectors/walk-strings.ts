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
  const limits = { ...DEFAULT_WALK_LIMITS, ...options.limits };
  const stack: Frame[] = [{ value: root, path: options.basePath ?? "", memberName: undefined }];
  const seen = new Set<object>();
  let strings = 0;
  let chars = 0;
  let nodes = 0;

  /** Visits one text, or returns the reason the budget ran out (after visiting what still fits). */
  const visitText = (item: WalkedText): { masked: boolean; stop?: "strings" | "chars" } => {
    if (strings >= limits.maxStrings) return { masked: false, stop: "strings" };
    strings++;
    const room = limits.maxChars - chars;
    if (item.text.length > room) {
      chars = limits.maxChars;
      if (room > 0) visit({ ...item, text: item.text.slice(0, room) });
      return { masked: false, stop: "chars" };
    }
    chars += item.text.length;
    return { masked: visit(item) === true };
  };

  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (++nodes > limits.maxNodes) return { complete: false, stoppedAt: frame.path, reason: "nodes" };
    const { value, path } = frame;

    if (typeof value === "string") {
      const result = visitText({ text: value, path, kind: "value", memberName: frame.memberName, parentPath: path });
      if (result.stop) return { complete: false, stoppedAt: path, reason: result.stop };
      continue;
    }
    if (typeof value === "number") {
      if (Number.isInteger(value)) {
        visit({ text: String(value), path, kind: "number", memberName: frame.memberName, parentPath: path });
      }
      continue;
    }
    if (typeof value !== "object" || value === null || ArrayBuffer.isView(value) || seen.has(value)) continue;
    seen.add(value);

    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index--) {
        stack.push({ value: value[index], path: `${path}/${index}`, memberName: undefined });
      }
      continue;
    }

    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    const children: Frame[] = [];
    for (const key of keys) {
      const memberPath = `${path}/${escapePointerSegment(key)}`;
      const result = visitText({ text: key, path: memberPath, kind: "key", memberName: undefined, parentPath: path });
      // The member name may itself be what a detector would hide, so the stop is placed at the object.
      if (result.stop) return { complete: false, stoppedAt: path, reason: result.stop };
      const childPath = result.masked ? `${path}/${REDACTED_SEGMENT}` : memberPath;
      children.push({ value: record[key], path: childPath, memberName: key });
    }
    for (let index = children.length - 1; index >= 0; index--) stack.push(children[index]!);
  }
  return { complete: true };
}
