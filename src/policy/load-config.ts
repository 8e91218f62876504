import { readFileSync } from "node:fs";
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from "yaml";
import { compilePattern } from "./pattern.js";
import { PolicySchema, type Match, type PolicyConfig } from "./config.js";
import { UsageError } from "../util/usage-error.js";

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
      return `${where(file, doc, lines, issue.path, key)}: ${issue.message}`;
    });
    throw new PolicyConfigError(messages.join("\n"));
  }
  const policy = result.data;
  checkPatterns(policy, file, doc, lines);
  return policy;
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
