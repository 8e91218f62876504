import { createRequire } from "node:module";
import type { Ajv as AjvClass, ValidateFunction } from "ajv";
import type { RE2JS as RE2JSClass } from "re2js";
import { canonicalJson, sha256Of } from "../util/canonical-json.js";

/**
 * Server-supplied JSON Schemas compiled with bounds: regular expressions run on RE2 (linear time, no
 * catastrophic backtracking), and ajv, whose compile time grows faster than the schema, only sees schemas
 * under a size and depth cap. Compiled validators are shared by content hash, but held only by those who
 * use them (the tool catalog's entries): the cache refers to them weakly, so a validator, and the whole
 * schema it keeps, goes with the last tool that used it (a catalog bounded in bytes stays so).
 */

/**
 * ajv and RE2 are loaded on the first schema compiled, synchronously (both ship CommonJS): a launch that never
 * sees a tool schema (and every launch until its first tools/list) does without their load time and memory.
 */
const load = createRequire(import.meta.url);
let engines: { Ajv: typeof AjvClass; RE2JS: typeof RE2JSClass } | null = null;
function schemaEngines(): { Ajv: typeof AjvClass; RE2JS: typeof RE2JSClass } {
  engines ??= { Ajv: (load("ajv") as { Ajv: typeof AjvClass }).Ajv, RE2JS: (load("re2js") as { RE2JS: typeof RE2JSClass }).RE2JS };
  return engines;
}

/** ajv needs seconds for a few thousand subschemas (measured: 1,000 properties 0.4 s, 2,000 1.3 s); real tool schemas are far below. */
export const MAX_SCHEMA_NODES = 1_000;
export const MAX_SCHEMA_DEPTH = 32;
const MAX_CACHED = 500;
const MAX_QUOTED_PATTERN = 120;

export type CompiledSchema = { validate: ValidateFunction } | { unchecked: string };

class UnsupportedPattern extends Error {}

/** ECMAScript `\uXXXX` and `\u{X…}` are RE2's `\x{X…}`; an escaped backslash is kept as it is. */
function toRe2Syntax(pattern: string): string {
  return pattern.replace(/\\\\|\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})/g, (all, braced?: string, four?: string) =>
    braced !== undefined || four !== undefined ? `\\x{${braced ?? four}}` : all,
  );
}

/** ajv's `code.regExp` hook: JSON Schema `pattern`s search anywhere in the string, as RegExp.test does. */
const re2Engine = Object.assign(
  (pattern: string): { test(s: string): boolean } => {
    const { RE2JS } = schemaEngines();
    let re: RE2JSClass;
    try {
      re = RE2JS.compile(toRe2Syntax(pattern));
    } catch {
      const quoted = JSON.stringify(pattern.length > MAX_QUOTED_PATTERN ? `${pattern.slice(0, MAX_QUOTED_PATTERN)}…` : pattern);
      throw new UnsupportedPattern(`pattern ${quoted} is not supported by the RE2 engine (no lookaround, no backreferences)`);
    }
    return { test: (s: string) => re.matcher(s).find() };
  },
  { code: "re2" },
);

/** Counts nodes and depth without recursion, stopping at the first bound crossed. */
export function schemaBoundsProblem(schema: unknown): string | null {
  const stack: { value: unknown; depth: number }[] = [{ value: schema, depth: 1 }];
  let nodes = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (++nodes > MAX_SCHEMA_NODES) return `too large (more than ${MAX_SCHEMA_NODES} schema nodes)`;
    if (depth > MAX_SCHEMA_DEPTH) return `too deep (nested more than ${MAX_SCHEMA_DEPTH} levels)`;
    if (typeof value !== "object" || value === null) continue;
    for (const child of Array.isArray(value) ? value : Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  return null;
}

export class SchemaCompiler {
  /** content hash → result, oldest first (a Map keeps insertion order); weakly: see above. */
  private readonly cache = new Map<string, WeakRef<CompiledSchema>>();
  /** A collected result's key goes too (unless the key was compiled again since). */
  private readonly collected = new FinalizationRegistry<string>((key) => {
    if (this.cache.get(key)?.deref() === undefined) this.cache.delete(key);
  });

  compile(schema: object): CompiledSchema {
    const bounds = schemaBoundsProblem(schema);
    if (bounds) return { unchecked: bounds };
    const key = sha256Of(canonicalJson(schema));
    const ref = this.cache.get(key);
    const hit = ref?.deref();
    if (ref && hit) {
      this.cache.delete(key);
      this.cache.set(key, ref);
      return hit;
    }
    const result = compileFresh(schema);
    this.cache.delete(key);
    this.cache.set(key, new WeakRef(result));
    this.collected.register(result, key);
    if (this.cache.size > MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    return result;
  }
}

/** A fresh ajv per schema: its registry of `$id`s (plain objects keyed by server strings) never outlives one compile. */
function compileFresh(schema: object): CompiledSchema {
  const { Ajv } = schemaEngines();
  const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false, logger: false, code: { regExp: re2Engine } });
  try {
    return { validate: ajv.compile(schema) };
  } catch (err) {
    if (err instanceof UnsupportedPattern) return { unchecked: err.message };
    if (err instanceof RangeError) return { unchecked: "too complex for the schema compiler" };
    return { unchecked: `ajv cannot compile it (${(err as Error).message.split("\n")[0]!.slice(0, 200)})` };
  }
}
