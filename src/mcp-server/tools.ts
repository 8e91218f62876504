import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { GROUP_BY } from "../analysis/names.js";
import { escapeLine } from "../log/escape-line.js";
import { checkOf, statsOf } from "./analysis-tools.js";
import { pageInput, recordBudgetInput, shownRecordSchema, ToolInputError } from "./bounded.js";
import { getExchange } from "./exchange.js";
import { recentFailures } from "./failures.js";
import { replayCall, type ReplaySettings } from "./replay-tool.js";
import { searchMessages } from "./search.js";
import { listSessions } from "./sessions.js";
import type { ServedLogs } from "./served-logs.js";
import { toolCatalog } from "./tool-catalog.js";

const loose = z.looseObject;
const nullableString = z.string().nullable();
const queryInput = z.string().max(2_000).optional();
const TAIL_TOKENS = "tail's filter tokens: server:<glob> session:<prefix> method:<glob> tool:<glob> decision:allow|flag|deny (comma lists allowed)";

const exchangeShape = {
  selector: nullableString,
  server: nullableString,
  session: nullableString,
  transport: nullableString,
  protocolVersion: nullableString,
  method: nullableString,
  tool: nullableString,
  outcome: z.string(),
  decision: z.string(),
  error: nullableString,
  latencyMs: z.number().nullable(),
  rounds: z.number(),
  firstSeen: nullableString,
  lastSeen: nullableString,
  httpStatus: z.number().nullable(),
  rules: z.array(loose({})),
  records: z.array(shownRecordSchema),
  http: shownRecordSchema.nullable(),
};

/** The answer of a tool: the structured result, and the same as JSON text (control and bidi characters escaped). */
function answer(structured: object): CallToolResult {
  return { content: [{ type: "text", text: escapeLine(JSON.stringify(structured)) }], structuredContent: structured as Record<string, unknown> };
}

/** A request the server cannot act on is a tool error saying why; anything else is a bug and propagates. */
async function guardedRun(run: () => object | Promise<object>): Promise<CallToolResult> {
  try {
    return answer(await run());
  } catch (err) {
    if (err instanceof ToolInputError) return { isError: true, content: [{ type: "text", text: escapeLine(err.message) }] };
    throw err;
  }
}

export function registerTools(server: McpServer, logs: ServedLogs, replay: ReplaySettings | null): void {
  const index = logs.index;
  // The server answers `initialize` at once; a tool waits until what the logs held at the start is read.
  const guarded = async (run: () => object | Promise<object>): Promise<CallToolResult> => {
    await logs.ready;
    return guardedRun(run);
  };
  const readOnly = { readOnlyHint: true, openWorldHint: false };

  server.registerTool(
    "list_sessions",
    {
      title: "List recorded MCP sessions",
      description: `Sessions in the recorded traffic, most recently active first: server and client (name, version), protocol revision, transport, times, and counts of messages, calls, errors, denials and unanswered calls. query: ${TAIL_TOKENS}.`,
      inputSchema: { query: queryInput, ...pageInput },
      outputSchema: { sessions: z.array(loose({ id: z.string(), uri: z.string(), server: nullableString, calls: z.number(), errors: z.number(), denials: z.number(), unanswered: z.number() })), total: z.number(), truncated: z.boolean(), nextCursor: nullableString },
      annotations: readOnly,
    },
    (args) => guarded(() => listSessions(index, args)),
  );

  server.registerTool(
    "search_messages",
    {
      title: "Search recorded messages",
      description: `Records matching a query, newest first. query: ${TAIL_TOKENS}; dir:client|server; status:ok|error|pending|denied; any other word is matched case-insensitively anywhere in the record. Requests come with their selector (<flow>#<id>) for get_exchange. Records over maxRecordBytes are shown by their head.`,
      inputSchema: { query: queryInput, ...pageInput, ...recordBudgetInput },
      outputSchema: { query: z.string(), hits: z.array(shownRecordSchema.extend({ selector: z.string().optional() })), scanned: z.number(), truncated: z.boolean(), nextCursor: nullableString, note: z.string().optional() },
      annotations: readOnly,
    },
    (args) => guarded(() => searchMessages(index, args)),
  );

  server.registerTool(
    "get_exchange",
    {
      title: "Get one call with its answer",
      description: "A request (by its selector <flow>#<id>, as search_messages and recent_failures give it) with its answer, progress notifications, cancellation, policy decision and findings, latency and the HTTP status of its exchange.",
      inputSchema: { selector: z.string().max(300), ...recordBudgetInput },
      outputSchema: exchangeShape,
      annotations: readOnly,
    },
    (args) => guarded(() => getExchange(index, args)),
  );

  server.registerTool(
    "recent_failures",
    {
      title: "Recent failed calls",
      description: `Calls that failed, newest first: JSON-RPC errors, tool results with isError, policy denials, requests never answered — each with its whole exchange (request, answer, decision, timing). query: ${TAIL_TOKENS}.`,
      inputSchema: { query: queryInput, ...pageInput, ...recordBudgetInput },
      outputSchema: { failures: z.array(loose({ failure: z.enum(["error", "tool_error", "denied", "unanswered"]), at: z.number(), ...exchangeShape })), truncated: z.boolean(), nextCursor: nullableString },
      annotations: readOnly,
    },
    (args) => guarded(() => recentFailures(index, args)),
  );

  const groupStats = loose({ key: z.record(z.string(), z.string().nullable()), calls: z.number(), ok: z.number(), errors: z.number(), denied: z.number(), unanswered: z.number() });
  server.registerTool(
    "stats",
    {
      title: "Call statistics",
      description: `What \`mcp-wiretap stats --json\` prints over the served logs: per tool (or method, server, session) calls, errors, denials, latency percentiles, bytes; the same numbers as the command. query: ${TAIL_TOKENS}.`,
      inputSchema: { by: z.enum(GROUP_BY).optional(), query: queryInput, limit: z.number().int().min(1).max(500).optional() },
      outputSchema: { version: z.literal(1), by: z.string(), groups: z.array(groupStats), totals: groupStats, files: z.array(z.string()), records: z.number(), truncated: z.boolean(), omitted: z.number() },
      annotations: readOnly,
    },
    (args) => guarded(() => statsOf(logs, args)),
  );

  server.registerTool(
    "check",
    {
      title: "Check the recorded traffic",
      description: "What `mcp-wiretap check` finds in the served logs, with the same conditions: error, invalid, deny, flag, pending, mismatch, drift, deprecated, incomplete (or all; default error,invalid,deny), plus expectTools, forbidTools and maxLatencyMs.",
      inputSchema: {
        failOn: z.array(z.string().max(50)).max(20).optional(),
        expectTools: z.array(z.string().max(200)).max(50).optional(),
        forbidTools: z.array(z.string().max(200)).max(50).optional(),
        maxLatencyMs: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(1_000).optional(),
      },
      outputSchema: { ok: z.boolean(), checked: z.array(z.string()), records: z.number(), files: z.array(z.string()), counts: z.record(z.string(), z.number()), findings: z.array(loose({ condition: z.string(), reason: z.string() })), total: z.number(), truncated: z.boolean(), summary: z.string() },
      annotations: readOnly,
    },
    (args) => guarded(() => checkOf(logs.files(), args)),
  );

  server.registerTool(
    "tool_catalog",
    {
      title: "Tool definitions per server",
      description: "The tools each server listed (tools/list results in the logs), per log, newest first: name, title, description, size and a token estimate (UTF-8 bytes / 4), and what changed since the server's previous log (tools added, removed, redefined). server: a glob on the server's name@host or host:port.",
      inputSchema: { server: z.string().max(200).optional(), includeDefinitions: z.boolean().optional(), maxBytes: pageInput.maxBytes },
      outputSchema: { servers: z.array(loose({ server: z.string(), file: z.string(), tools: z.array(loose({ name: z.string(), tokens: z.number() })), totalTokens: z.number(), changes: z.array(loose({ type: z.string() })) })), truncated: z.boolean() },
      annotations: readOnly,
    },
    (args) => guarded(() => toolCatalog(index, args)),
  );

  if (replay === null) return;
  server.registerTool(
    "replay_call",
    {
      title: "Replay a captured call",
      description: "Sends one captured request (by selector) to its server again in a fresh session, through the policy, as `mcp-wiretap replay` does, and returns the answer; its records are appended to the log with replayOf. A tool call the capture does not mark readOnlyHint needs confirm: true (it runs the tool again). set: edits as `path=JSON` (e.g. arguments.message=\"hi\"). stdio captures are not replayed.",
      inputSchema: { selector: z.string().max(300), set: z.array(z.string().max(10_000)).max(20).optional(), confirm: z.boolean().optional() },
      outputSchema: { selector: z.string(), answered: z.boolean(), exitCode: z.number(), answer: z.unknown(), notes: z.array(z.string()), log: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    },
    (args) => guarded(() => replayCall(index, args, replay)),
  );
}
