import { globToRegExp } from "../util/glob.js";

export type CompiledPattern = { ok: true; test(value: string): boolean; source: string } | { ok: false; error: string };

/** A glob (see util/glob.ts), or a regular expression after "re:". */
export function compilePattern(pattern: string): CompiledPattern {
  if (pattern.startsWith("re:")) {
    const source = pattern.slice(3);
    try {
      const re = new RegExp(source, "u");
      return { ok: true, test: (v) => re.test(v), source: `re:${source}` };
    } catch (err) {
      return { ok: false, error: `invalid regular expression ${JSON.stringify(source)}: ${(err as Error).message}` };
    }
  }
  const re = globToRegExp(pattern);
  return { ok: true, test: (v) => re.test(v), source: pattern };
}
