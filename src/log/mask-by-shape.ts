import { defineMember } from "./redact/members.js";

/** A text as a record carries it: `[redacted: <type>]` when it holds a secret (given its member's name), else itself. */
export type MaskText = (text: string, memberName?: string) => string;

/** An object or array being walked; `next` is the index of the member after the one being visited. */
interface Frame {
  node: Record<string, unknown> | unknown[] | null;
  names: string[] | null; // null for an array
  masked: string[] | null; // the names as masked, once one is
  copy: Record<string, unknown> | unknown[] | null;
  next: number;
  tracked: boolean; // its node is in the walk's path set (and leaves it with this frame)
}

/** Frames are reused from one walk to the next (none is allocated per node); a walk uses those from its `base` up. */
const frames: Frame[] = [];
let used = 0;
/** Deeper than this, the path is tracked: a cycle is left as it is (records and payloads have none) instead of walked forever. */
const TRACKED_FROM = 64;

/**
 * `value` with every string, and every member name, holding a secret masked by `mask` (names that mask alike
 * are numbered); a string is masked under `memberName`. Copy-on-write: what is unchanged is shared, and `value`
 * itself is returned when nothing is masked; nothing given is modified. Iterative, so any depth is safe.
 */
export function maskByShape(value: unknown, mask: MaskText, memberName?: string): unknown {
  if (typeof value === "string") return mask(value, memberName);
  if (typeof value !== "object" || value === null) return value;
  const base = used;
  let onPath: Set<object> | null = null;
  try {
    let top = enter(value, false);
    for (;;) {
      const { node, names } = top;
      if (top.next < (names ?? (node as unknown[])).length) {
        const i = top.next++;
        const name = names?.[i];
        const member = name === undefined ? (node as unknown[])[i] : (node as Record<string, unknown>)[name];
        // Its name (a peer chooses names too: a token sent as one is masked like a value), then its value if a
        // text. One call site of `mask`: V8 then inlines the scan whole and allocates nothing for it.
        for (let k = name === undefined ? 1 : 0; k < 2; k++) {
          const text = k === 0 ? name : member;
          if (typeof text !== "string") continue;
          const clean = mask(text, k === 0 ? undefined : name);
          if (clean === text) continue;
          if (k === 0) (top.masked ??= names!.slice())[i] = clean;
          else place(top, i, clean);
        }
        if (typeof member === "object" && member !== null) {
          if (onPath === null && used - base >= TRACKED_FROM) {
            onPath = new Set();
            for (let k = base; k < used; k++) {
              const frame = frames[k]!;
              frame.tracked = !onPath.has(frame.node!); // a node twice on the path (a cycle) leaves it with its outer frame
              onPath.add(frame.node!);
            }
          }
          if (onPath?.has(member)) continue;
          onPath?.add(member);
          top = enter(member, onPath !== null);
        }
        continue;
      }
      const values = top.copy ?? node!;
      const done = top.masked === null ? values : withMaskedNames(names!, top.masked, values as Record<string, unknown>);
      if (top.tracked) onPath!.delete(node!);
      release(top);
      if (--used === base) return done;
      top = frames[used - 1]!;
      if (done !== node) place(top, top.next - 1, done);
    }
  } finally {
    for (; used > base; used--) release(frames[used - 1]!); // after a throw: no frame is left in use
  }
}

function enter(node: object, tracked: boolean): Frame {
  const frame = (frames[used++] ??= { node: null, names: null, masked: null, copy: null, next: 0, tracked: false });
  frame.node = node as Record<string, unknown> | unknown[];
  frame.names = Array.isArray(node) ? null : Object.keys(node);
  frame.next = 0;
  frame.tracked = tracked;
  return frame;
}

/** Lets go of what the frame held (not kept alive until the next walk as deep). */
function release(frame: Frame): void {
  frame.node = frame.names = frame.masked = frame.copy = null;
}

/** Sets member `i` of the frame's copy, made on the first change (every member kept, `__proto__` included). */
function place(frame: Frame, i: number, value: unknown): void {
  const { node, names } = frame;
  if (names === null) ((frame.copy ??= (node as unknown[]).slice()) as unknown[])[i] = value;
  else {
    if (frame.copy === null) {
      frame.copy = {};
      for (const name of names) defineMember(frame.copy, name, (node as Record<string, unknown>)[name]);
    }
    defineMember(frame.copy, names[i]!, value);
  }
}

/**
 * The members of `values`, in order, renamed from `names` to `masked`: a masked name already taken (by a name
 * kept, or one masked before it) is numbered ` #2`, ` #3`, ..., so that no member is lost.
 */
export function withMaskedNames(names: readonly string[], masked: readonly string[], values: Record<string, unknown>): Record<string, unknown> {
  const taken = new Set(names.filter((name, i) => masked[i] === name));
  const out: Record<string, unknown> = {};
  names.forEach((name, i) => {
    let clean = masked[i]!;
    if (clean !== name) {
      for (let n = 2; taken.has(clean); n++) clean = `${masked[i]!} #${n}`;
      taken.add(clean);
    }
    defineMember(out, clean, values[name]);
  });
  return out;
}
