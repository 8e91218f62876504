import { readFileSync } from "node:fs";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import { compilePattern } from "./pattern.js";
import { PolicySchema, type Match, type PolicyConfig } from "./config.js";
import { UsageError } from "../util/usage-error.js";
import type { z } from "zod";

export class PolicyConfigError extends UsageError {}

/** Reads and validates a policy file; every problem names the file, the line and the path inside it. */
export function loadPolicyFile(file: string): PolicyConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new PolicyConfigError(`${file}: cannot read the policy file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return parsePolicy(text, file);
}

export function parsePolicy(text: string, file = "<policy>"): PolicyConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const pos = lines.linePos(e.pos[0]);
    throw new PolicyConfigError(`${file}:${pos.line}:${pos.col}: not valid YAML: ${e.message.split("\n")[0]}`);
  }
  const raw: unknown = doc.toJS() ?? {};
  refuseProtoPaths(raw, file, doc, lines);
  const result = PolicySchema.safeParse(raw);
  if (!result.success) {
    const messages = result.error.issues.map((issue) => {
      // An unknown key is reported on its parent: point at the (first) key itself, so the line is the one to fix.
      const key = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
      const hint = key === undefined ? "" : didYouMean(key, keysAt(PolicySchema, issue.path));
      return `${where(file, doc, lines, issue.path, key)}: ${issue.message}${hint}`;
    });
    throw new PolicyConfigError(messages.join("\n"));
  }
  const policy = result.data;
  checkPatterns(policy, file, doc, lines);
  return policy;
}

/** The keys an object schema takes at `path` (through arrays, defaults and optionals), for hints. */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: unknown = schema;
  const unwrap = (n: unknown): unknown => {
    for (let def = (n as { def?: { innerType?: unknown } }).def; def?.innerType; def = (n as { def?: { innerType?: unknown } }).def) n = def.innerType;
    return n;
  };
  for (const key of path) {
    node = unwrap(node);
    if (typeof key === "number") node = (node as { element?: unknown }).element;
    else node = (node as { shape?: Record<string, unknown> }).shape?.[String(key)];
    if (node === undefined) return [];
  }
  return Object.keys((unwrap(node) as { shape?: Record<string, unknown> }).shape ?? {});
}

/** " (did you mean rules?)" when one known key is a typo away from `key`. */
export function didYouMean(key: string, known: readonly string[]): string {
  const limit = Math.max(1, Math.floor(key.length / 3));
  const ranked = known.map((k) => ({ k, d: editDistance(key.toLowerCase(), k.toLowerCase()) })).filter((x) => x.d <= limit);
  ranked.sort((a, b) => a.d - b.d);
  return ranked.length > 0 ? ` (did you mean ${ranked[0]!.k}?)` : ` (known keys here: ${known.join(", ")})`;
}

/** Levenshtein distance: short keys, so the plain table is enough. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** zod builds records by assignment, so an `args` key "__proto__" would vanish and leave a rule matching everything. */
function refuseProtoPaths(raw: unknown, file: string, doc: Document, lines: LineCounter): void {
  for (const list of ["rules", "rateLimits"] as const) {
    const items = (raw as Record<string, unknown> | null)?.[list];
    if (!Array.isArray(items)) continue;
    items.forEach((item: unknown, i) => {
      const args = (item as { match?: { args?: unknown } } | null)?.match?.args;
      if (typeof args === "object" && args !== null && Object.hasOwn(args, "__proto__")) {
        throw new PolicyConfigError(`${where(file, doc, lines, [list, i, "match", "args"])}: argument path "__proto__" is not supported`);
      }
    });
  }
}

function checkPatterns(policy: PolicyConfig, file: string, doc: Document, lines: LineCounter): void {
  const check = (match: Match, base: (string | number)[]): void => {
    for (const field of ["server", "method", "tool"] as const) {
      const p = match[field];
      if (p === undefined) continue;
      const compiled = compilePattern(p);
      if (!compiled.ok) throw new PolicyConfigError(`${where(file, doc, lines, [...base, field])}: ${compiled.error}`);
    }
    for (const [arg, p] of Object.entries(match.args ?? {})) {
      const compiled = compilePattern(p);
      if (!compiled.ok) throw new PolicyConfigError(`${where(file, doc, lines, [...base, "args", arg])}: ${compiled.error}`);
    }
  };
  policy.rules.forEach((r, i) => check(r.match, ["rules", i, "match"]));
  policy.rateLimits.forEach((r, i) => check(r.match, ["rateLimits", i, "match"]));
}

function where(file: string, doc: Document, lines: LineCounter, path: readonly PropertyKey[], key?: string): string {
  const dotted = path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, "") || "(top level)";
  const parent = nodeAt(doc, path);
  const keyNode = key !== undefined && isMap(parent) ? parent.items.find((pair) => isScalar(pair.key) && pair.key.value === key)?.key : undefined;
  const node = keyNode ?? parent;
  const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
  if (!range) return `${file}: ${dotted}`;
  const pos = lines.linePos(range[0]);
  return `${file}:${pos.line}:${pos.col}: ${dotted}`;
}

/** The deepest YAML node that exists along `path` (a missing key points at its parent). */
function nodeAt(doc: Document, path: readonly PropertyKey[]): unknown {
  let node: unknown = doc.contents;
  for (const key of path) {
    if (isMap(node)) {
      const next = node.get(String(key), true);
      if (next === undefined) return node;
      node = next;
    } else if (isSeq(node) && typeof key === "number") {
      const next = node.get(key, true);
      if (next === undefined) return node;
      node = next;
    } else {
      return node;
    }
  }
  return node;
}
