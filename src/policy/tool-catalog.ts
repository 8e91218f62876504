import { canonicalJson, sha256Of } from "../util/canonical-json.js";
import { SchemaCompiler, type CompiledSchema } from "./schema-compiler.js";

const MAX_SERVERS = 1_000;

export interface ToolDefinition {
  name: string;
  definition: Record<string, unknown>;
}

export type SchemaCheck =
  /** nothing known to check against */
  | undefined
  | "unknown_tool"
  /** the tool's schema could not be used safely; the reason says why */
  | { unchecked: string }
  /** [] when valid */
  | { instancePath: string; message: string }[];

/** The tools each server announced in tools/list: their input schemas, compiled on first use. */
export class ToolCatalog {
  private readonly servers = new Map<string, Map<string, { schema: unknown; compiled?: CompiledSchema | null }>>();
  private readonly compiler = new SchemaCompiler();

  /** Adds a tools/list page; pages accumulate (a paginated list arrives in several results). */
  learn(server: string, tools: readonly ToolDefinition[]): void {
    const map = this.servers.get(server) ?? new Map<string, { schema: unknown; compiled?: CompiledSchema | null }>();
    for (const t of tools) map.set(t.name, { schema: t.definition.inputSchema });
    this.servers.delete(server);
    this.servers.set(server, map);
    if (this.servers.size > MAX_SERVERS) this.servers.delete(this.servers.keys().next().value as string);
  }

  knows(server: string): boolean {
    return this.servers.has(server);
  }

  check(server: string, tool: string, args: unknown): SchemaCheck {
    const tools = this.servers.get(server);
    if (!tools) return undefined;
    const entry = tools.get(tool);
    if (!entry) return "unknown_tool";
    if (entry.compiled === undefined) {
      // Not an object (a string, null, an array): nothing a client could be held to.
      const usable = typeof entry.schema === "object" && entry.schema !== null && !Array.isArray(entry.schema);
      entry.compiled = usable ? this.compiler.compile(entry.schema as object) : null;
    }
    if (!entry.compiled) return undefined;
    if ("unchecked" in entry.compiled) return { unchecked: entry.compiled.unchecked };
    const validate = entry.compiled.validate;
    try {
      if (validate(args ?? {})) return [];
    } catch (err) {
      // ajv validates recursively: a recursive schema and deeply nested arguments exhaust the stack.
      if (err instanceof RangeError) return { unchecked: "the arguments are nested too deeply to check" };
      throw err;
    }
    return (validate.errors ?? []).map((e) => ({ instancePath: e.instancePath, message: e.message ?? "invalid" }));
  }
}

/** tools/list result → tool definitions; ignores malformed entries. */
export function toolsOf(result: unknown): ToolDefinition[] {
  const tools = (result as { tools?: unknown } | undefined)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((t): t is Record<string, unknown> => typeof t === "object" && t !== null && typeof (t as { name?: unknown }).name === "string")
    .map((t) => ({ name: t.name as string, definition: t }));
}

/** The pinned identity of a tool: sha256 of its canonical definition. */
export function toolDigest(definition: Record<string, unknown>): string {
  return sha256Of(canonicalJson(definition));
}
