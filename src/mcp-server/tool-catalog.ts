import { diffTools, type Change } from "../analysis/run-diff.js";
import { toolDefinitions, type ServerTools } from "../analysis/tool-defs.js";
import { type LogRecord } from "../saved-logs/filters.js";
import { globToRegExp } from "../util/glob.js";
import { LIMITS, Page } from "./bounded.js";
import type { HeldRecord, RecordIndex } from "./record-index.js";

/**
 * Token estimate of a definition: its UTF-8 JSON bytes / 4, the usual rule of thumb for English and JSON
 * under the tokenizers in use (no tokenizer is shipped: each model has its own).
 */
export function estimateTokens(value: unknown): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify(value)) / 4);
}

export interface CatalogTool {
  name: string;
  title: string | null;
  description: string | null;
  bytes: number;
  tokens: number;
  annotations: Record<string, unknown> | null;
  definition?: Record<string, unknown>;
}

export interface CatalogServer {
  /** `serverInfo.name@host`, or `host:port` when the log does not name it. */
  server: string;
  addresses: string[];
  /** The log the listing was read from (each log is one capture). */
  file: string;
  tools: CatalogTool[];
  totalTokens: number;
  /** tools/list results that could not be read (payloads cut short or not recorded). */
  unreadableListings: number;
  /** What changed since this server's previous capture (added, removed, redefined tools). */
  changes: Change[];
}

export interface CatalogResult {
  servers: CatalogServer[];
  truncated: boolean;
}

/** `tool_catalog`: the tools each server listed, per log, with their token estimates and what changed. */
export async function toolCatalog(index: RecordIndex, input: { server?: string; includeDefinitions?: boolean; maxBytes?: number }): Promise<CatalogResult> {
  const wanted: { held: HeldRecord; listing: boolean }[] = [];
  for (const held of index.all()) {
    const h = held.head;
    const listing = h.event === "rpc" && h.kind === "response" && h.method === "tools/list";
    if (listing || (h.event === "session" && h.phase === "start")) wanted.push({ held, listing });
  }
  const perFile = new Map<string, LogRecord[]>();
  for (const { held, listing } of wanted) {
    const list = perFile.get(held.file) ?? [];
    // Listings need their payload (one no longer readable counts as unreadable); a session start's head already holds the server's name.
    const read = listing ? await index.read(held) : null;
    list.push(read !== null && "record" in read ? read.record : held.head);
    perFile.set(held.file, list);
  }
  const match = input.server ? globToRegExp(input.server) : null;
  const previous = new Map<string, ServerTools>();
  const servers: CatalogServer[] = [];
  for (const [file, records] of perFile) {
    for (const entry of toolDefinitions(records).values()) {
      const changes = previous.has(entry.key) ? diffTools(entry.key, previous.get(entry.key), entry) : [];
      if (entry.tools.size > 0) previous.set(entry.key, entry);
      if (match && !match.test(entry.key) && !entry.addresses.some((a) => match.test(a))) continue;
      const tools = [...entry.tools.values()].map((t) => catalogTool(t, input.includeDefinitions === true));
      servers.push({ server: entry.key, addresses: entry.addresses, file, tools, totalTokens: tools.reduce((n, t) => n + t.tokens, 0), unreadableListings: entry.unreadableListings, changes });
    }
  }
  // Newest capture first; the page keeps whole servers.
  const page = new Page<CatalogServer>(LIMITS.limit.max, input.maxBytes ?? LIMITS.maxBytes.default);
  let truncated = false;
  for (const s of servers.reverse()) if (!page.add(s)) truncated = true;
  return { servers: page.items, truncated };
}

function catalogTool(t: Record<string, unknown>, withDefinition: boolean): CatalogTool {
  const description = typeof t.description === "string" ? t.description : null;
  return {
    name: String(t.name),
    title: typeof t.title === "string" ? t.title : null,
    description: description !== null && description.length > 300 && !withDefinition ? `${description.slice(0, 299)}…` : description,
    bytes: Buffer.byteLength(JSON.stringify(t)),
    tokens: estimateTokens(t),
    annotations: t.annotations !== null && typeof t.annotations === "object" ? (t.annotations as Record<string, unknown>) : null,
    ...(withDefinition ? { definition: t } : {}),
  };
}
