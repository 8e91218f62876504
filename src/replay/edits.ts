/** The params a replay sends: the captured ones, replaced whole (`--params`) and edited at paths (`--set`). */
import { UsageError } from "../util/usage-error.js";

/** Keys that would reach an object's prototype rather than a member of it. */
const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

export interface Edit {
  path: string[];
  value: unknown;
  /** As given, for messages. */
  text: string;
}

/** `arguments.message='"hi"'` → path `["arguments","message"]`, value `"hi"` (JSON). */
export function parseSet(text: string): Edit {
  const eq = text.indexOf("=");
  if (eq <= 0) throw new UsageError(`--set ${text}: expected path=JSON, e.g. --set arguments.message='"hi"'`);
  const path = text.slice(0, eq).split(".");
  if (path.some((k) => k === "" || UNSAFE_KEYS.has(k))) throw new UsageError(`--set ${text}: bad path ${JSON.stringify(text.slice(0, eq))}`);
  const raw = text.slice(eq + 1);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new UsageError(`--set ${text}: the value must be JSON: a string needs its quotes (--set ${text.slice(0, eq)}='${JSON.stringify(raw)}')`);
  }
  return { path, value, text };
}

/** Parses `--params` text: a JSON object. */
export function parseParams(text: string, from: string, option = "--params"): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${option} ${from}: not JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError(`${option} ${from}: must be a JSON object`);
  return value as Record<string, unknown>;
}

/** A copy of `params` with each edit applied in order; objects on the way are created, arrays indexed. */
export function applyEdits(params: Record<string, unknown>, edits: readonly Edit[]): Record<string, unknown> {
  const out = structuredClone(params);
  for (const edit of edits) {
    let node: Record<string, unknown> | unknown[] = out;
    edit.path.forEach((key, i) => {
      const last = i === edit.path.length - 1;
      if (Array.isArray(node)) {
        const index = Number(key);
        if (!Number.isInteger(index) || index < 0 || index > node.length) throw new UsageError(`--set ${edit.text}: ${edit.path.slice(0, i).join(".")} is an array: ${key} is not an index in it`);
        if (last) node[index] = edit.value;
        else node = child(node, index, edit, i);
        return;
      }
      if (last) node[key] = edit.value;
      else node = child(node, key, edit, i);
    });
  }
  return out;
}

function child(node: Record<string, unknown> | unknown[], key: string | number, edit: Edit, i: number): Record<string, unknown> | unknown[] {
  const existing = (node as Record<string | number, unknown>)[key];
  if (existing === undefined) {
    const made: Record<string, unknown> = {};
    (node as Record<string | number, unknown>)[key] = made;
    return made;
  }
  if (existing === null || typeof existing !== "object") {
    throw new UsageError(`--set ${edit.text}: ${edit.path.slice(0, i + 1).join(".")} is ${JSON.stringify(existing)}, not an object`);
  }
  return existing as Record<string, unknown> | unknown[];
}
