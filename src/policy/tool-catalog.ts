import { ENTRY_OVERHEAD, EvictionReport, type EvictionSink } from "../bounds/evictions.js";
import { canonicalJson, sha256Of } from "../util/canonical-json.js";
import { SchemaCompiler, type CompiledSchema } from "./schema-compiler.js";
import { serverPeer } from "../mcp/table-peer.js";

/**
 * What the catalog may hold: real servers list tens of tools, their schemas a few KB each. Past a server's
 * share its least recently used tools go; past the whole catalog's, its least recently used servers.
 */
export const CATALOG_BOUNDS = {
  maxServers: 1_000,
  maxToolsPerServer: 2_000,
  maxBytesPerServer: 4 * 1024 * 1024,
  maxBytes: 32 * 1024 * 1024,
};
export type CatalogBounds = typeof CATALOG_BOUNDS;

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

interface ToolEntry {
  schema: unknown;
  compiled?: CompiledSchema | null;
  bytes: number;
  /** Set when the schema alone is past a server's share: not kept, so never checked. */
  tooLarge?: number;
}

interface ServerTools {
  /** By name, least recently used first. */
  tools: Map<string, ToolEntry>;
  bytes: number;
  /** Some of its tools were evicted: a tool not found may be one of them. */
  partial: boolean;
}

/**
 * The tools each server announced in tools/list: their input schemas, compiled on first use. Bounded by
 * tools and bytes per server and overall (schemas are as large as a server makes them); what is evicted
 * is reported in a `table_evicted` record.
 */
export class ToolCatalog {
  /** By server, least recently used first. */
  private readonly servers = new Map<string, ServerTools>();
  private readonly compiler = new SchemaCompiler();
  private heldBytes = 0;
  private readonly evictions: EvictionReport;

  constructor(
    private readonly bounds: CatalogBounds = CATALOG_BOUNDS,
    report: EvictionSink = () => undefined,
  ) {
    this.evictions = new EvictionReport("tool_catalog", { maxEntries: bounds.maxServers * bounds.maxToolsPerServer, maxBytes: bounds.maxBytes }, report);
  }

  /** Servers and tools held, and the bytes their schemas take. */
  get usage(): { servers: number; tools: number; bytes: number } {
    let tools = 0;
    for (const s of this.servers.values()) tools += s.tools.size;
    return { servers: this.servers.size, tools, bytes: this.heldBytes };
  }

  /** Adds a tools/list page; pages accumulate (a paginated list arrives in several results). */
  learn(server: string, tools: readonly ToolDefinition[]): void {
    const entry = this.use(server) ?? { tools: new Map<string, ToolEntry>(), bytes: 0, partial: false };
    this.servers.set(server, entry);
    for (const t of tools) {
      this.drop(entry, t.name);
      const schemaBytes = Buffer.byteLength(JSON.stringify(t.definition.inputSchema) ?? "");
      // Counted twice: the schema, and room for what compiling it makes.
      const bytes = 2 * schemaBytes + t.name.length + ENTRY_OVERHEAD;
      const tool: ToolEntry = bytes > this.bounds.maxBytesPerServer ? { schema: undefined, bytes: t.name.length + ENTRY_OVERHEAD, tooLarge: schemaBytes } : { schema: t.definition.inputSchema, bytes };
      entry.tools.set(t.name, tool);
      entry.bytes += tool.bytes;
      this.heldBytes += tool.bytes;
      while (entry.tools.size > this.bounds.maxToolsPerServer || entry.bytes > this.bounds.maxBytesPerServer) {
        const oldest = entry.tools.keys().next().value as string;
        this.evictions.evicted("per_server", this.drop(entry, oldest), 1, serverPeer(server).slice(0, 300));
        entry.partial = true;
      }
    }
    while (this.servers.size > this.bounds.maxServers || (this.heldBytes > this.bounds.maxBytes && this.servers.size > 1)) {
      const [oldest, held] = this.servers.entries().next().value as [string, ServerTools];
      this.servers.delete(oldest);
      this.heldBytes -= held.bytes;
      this.evictions.evicted(this.servers.size >= this.bounds.maxServers ? "entries" : "bytes", held.bytes, held.tools.size);
    }
  }

  knows(server: string): boolean {
    return this.servers.has(server);
  }

  check(server: string, tool: string, args: unknown): SchemaCheck {
    const tools = this.use(server);
    if (!tools) return undefined;
    const entry = tools.tools.get(tool);
    if (!entry) return tools.partial ? { unchecked: "its schema was evicted from the catalog (the server listed more tools or larger schemas than it holds)" } : "unknown_tool";
    tools.tools.delete(tool);
    tools.tools.set(tool, entry);
    if (entry.tooLarge !== undefined) return { unchecked: `its inputSchema (${entry.tooLarge} bytes) is larger than the catalog holds for one server` };
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

  /** Writes the evictions still counted. */
  flushEvictions(): void {
    this.evictions.flush();
  }

  /** A server's tools, now the most recently used. */
  private use(server: string): ServerTools | undefined {
    const entry = this.servers.get(server);
    if (!entry) return undefined;
    this.servers.delete(server);
    this.servers.set(server, entry);
    return entry;
  }

  /** Removes one tool of a server; the bytes it held. */
  private drop(entry: ServerTools, name: string): number {
    const tool = entry.tools.get(name);
    if (!tool) return 0;
    entry.tools.delete(name);
    entry.bytes -= tool.bytes;
    this.heldBytes -= tool.bytes;
    return tool.bytes;
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
