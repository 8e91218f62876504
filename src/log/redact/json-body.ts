import { defineMember, isPlainObject } from "./members.js";
import { redactedAs } from "./label.js";
import { isSecretMemberName, REDACTED } from "./names.js";
import { MIN_SCRUBBED_CHARS } from "./scrub.js";
import { REDACTED_SEGMENT } from "../../detectors/walk-strings.js";
import { maskByShape, withMaskedNames } from "../mask-by-shape.js";
import { maskShapedText } from "../shaped-secrets.js";

type CopyTask =
  | { source: unknown; target: Record<string, unknown> | unknown[]; key: string | number }
  | { leave: object };

/**
 * Deep copy of a decoded JSON body in which string members with secret names (access_token,
 * client_secret, password, token, ...) read REDACTED. Iterative, so any nesting depth is safe;
 * the input is not modified. Cycles become "[circular]"; objects that are not plain (Date,
 * Buffer, ...) are kept as they are. The values it hides go into `hidden` when given (from
 * MIN_SCRUBBED_CHARS), for removal by value wherever they come back.
 */
export function redactBody(value: unknown, hidden?: Set<string>): unknown {
  const root: unknown[] = [undefined];
  const ancestors = new Set<object>();
  const stack: CopyTask[] = [{ source: value, target: root, key: 0 }];
  for (let task = stack.pop(); task !== undefined; task = stack.pop()) {
    if ("leave" in task) {
      ancestors.delete(task.leave);
      continue;
    }
    const { source, target, key } = task;
    const place = (copy: unknown) =>
      typeof key === "number" ? ((target as unknown[])[key] = copy) : defineMember(target, key, copy);
    if (typeof source !== "object" || source === null || !(Array.isArray(source) || isPlainObject(source))) {
      place(source);
      continue;
    }
    if (ancestors.has(source)) {
      place("[circular]");
      continue;
    }
    ancestors.add(source);
    stack.push({ leave: source });
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array<unknown>(source.length);
      place(copy);
      for (let index = source.length - 1; index >= 0; index--) {
        stack.push({ source: source[index], target: copy, key: index });
      }
      continue;
    }
    const copy: Record<string, unknown> = {};
    place(copy);
    const names = Object.keys(source);
    for (const name of names) defineMember(copy, name, undefined); // keeps member order
    for (let index = names.length - 1; index >= 0; index--) {
      const name = names[index] as string;
      const member = source[name];
      if (typeof member === "string" && isSecretMemberName(name)) {
        defineMember(copy, name, REDACTED);
        if (hidden && member.length >= MIN_SCRUBBED_CHARS) hidden.add(member);
      }
      else stack.push({ source: member, target: copy, key: name });
    }
  }
  return root[0];
}

/**
 * Replaces the values at the given JSON Pointers (RFC 6901) of a copy made by `redactBody` with
 * `"[redacted: <what>]"`: secrets a detector found inside free-form payloads (a key pasted into a tool
 * argument) never reach the log either. Pointers that do not resolve are skipped.
 */
export function maskAtPointers(value: unknown, masks: readonly { pointer: string; what: string }[]): unknown {
  // A string that held several secrets is named after all of them, not the last one placed.
  const byPointer = new Map<string, string[]>();
  for (const { pointer, what } of masks) byPointer.set(pointer, [...(byPointer.get(pointer) ?? []), what]);
  for (const [pointer, whats] of byPointer) {
    const label = redactedAs(whats);
    if (pointer === "") return label;
    const segments = pointer.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
    // A member name the detector flagged is `<redacted>` in its path (and in the paths beneath it): the
    // object holding it has its secret names masked, and everything under them masked by shape.
    const hiddenName = segments.indexOf(REDACTED_SEGMENT);
    if (hiddenName !== -1) {
      let holder: unknown = value;
      for (const segment of segments.slice(0, hiddenName)) {
        holder = typeof holder === "object" && holder !== null ? (holder as Record<string, unknown>)[segment] : undefined;
      }
      if (isPlainObject(holder)) maskSecretNames(holder);
    }
    let parent: unknown = value;
    for (const segment of segments.slice(0, -1)) {
      parent = typeof parent === "object" && parent !== null ? (parent as Record<string, unknown>)[segment] : undefined;
    }
    const last = segments.at(-1)!;
    if (typeof parent === "object" && parent !== null && typeof (parent as Record<string, unknown>)[last] === "string") {
      (parent as Record<string, unknown>)[last] = label;
    }
  }
  return value;
}

/**
 * Renames, in place and in order, the members of `holder` (a copy made by `redactBody`) whose names hold a secret
 * (`[redacted: <type>]`, numbered when two mask alike); every string and member name beneath them is masked by shape too.
 */
function maskSecretNames(holder: Record<string, unknown>): void {
  const names = Object.keys(holder);
  const masked = names.map((name) => maskShapedText(name));
  if (masked.every((m, i) => m === names[i])) return;
  const values: Record<string, unknown> = {};
  names.forEach((name, i) => defineMember(values, name, masked[i] === name ? holder[name] : maskByShape(holder[name], maskShapedText, name)));
  const renamed = withMaskedNames(names, masked, values);
  for (const name of names) delete holder[name];
  for (const name of Object.keys(renamed)) defineMember(holder, name, renamed[name]);
}
