import { Ajv, type ValidateFunction } from "ajv";
import { canonicalJson, sha256Of } from "../mcp/canonical-json.js";

const MAX_SERVERS = 1_000;

export interface ToolDefinition {
  name: string;
  definition: Record<string, unknown>;
}

/** The tools each server announced in tools/list: their input schemas, compiled on first use. */
export class ToolCatalog {
  private readonly servers = new Map<string, Map<string, { schema: unknown; validate?: ValidateFunction | null }>>();
  private readonly ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false, logger: false });

  /** Adds a tools/list page; pages accumulate (a paginated list arrives in several results). */
  learn(server: string, tools: readonly ToolDefinition[]): void {
    const map = this.servers.get(server) ?? new Map<string, { schema: unknown; validate?: ValidateFunction | null }>();
    for (const t of tools) map.set(t.name, { schema: t.definition.inputSchema });
    this.servers.delete(server);
    this.servers.set(server, map);
    if (this.servers.size > MAX_SERVERS) this.servers.delete(this.servers.keys().next().value as string);
  }

  knows(server: string): boolean {
    return this.servers.has(server);
  }

  /** undefined: nothing known to check against; [] valid; otherwise ajv's errors. */
  check(server: string, tool: string, args: unknown): { instancePath: string; message: string }[] | "unknown_tool" | undefined {
    const tools = this.servers.get(server);
    if (!tools) return undefined;
    const entry = tools.get(tool);
    if (!entry) return "unknown_tool";
    if (entry.validate === undefined) {
      try {
        entry.validate = typeof entry.schema === "object" && entry.schema !== null ? this.ajv.compile(entry.schema as object) : null;
      } catch {
        entry.validate = null;
      }
    }
    if (!entry.validate) return undefined;
    if (entry.validate(args ?? {})) return [];
    return (entry.validate.errors ?? []).map((e) => ({ instancePath: e.instancePath, message: e.message ?? "invalid" }));
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
