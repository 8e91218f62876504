/**
 * The web UI's Replay and Edit and replay, on the server: the page names a captured request (`<flow>#<id>`)
 * and, to edit it, sends new params; the replay itself is src/replay/'s, as `mcp-wiretap replay` runs it (a
 * fresh MCP session through a proxy of its own: judged by the policy, recorded with `replayOf`). Its records
 * go where this UI reads them from (the running proxy's log, or the log file `ui --allow-replay` follows),
 * so the page sees the replay as recorded, masked, like any exchange. Only a UI given these actions has
 * them; ui-server.ts runs every request through the action guard first.
 */
import type { ValidateFunction } from "ajv";
import { SchemaCompiler } from "../../policy/schema-compiler.js";
import { obj, type LogRecord } from "../../saved-logs/filters.js";
import { eachLineInTurns, linesWithInTurns, oneHeldPassAtATime } from "../../saved-logs/lines-in-turns.js";
import { parseRecord } from "../../saved-logs/parse-record.js";
import { ReplayError } from "../../replay/channel.js";
import { replayOverHttp, type ReplayProxyOptions } from "../../replay/http-replay.js";
import { sessionPlan, targetUrl } from "../../replay/replay-call.js";
import { parseHeaders } from "../../replay/replay-inputs.js";
import { findBySelector, type CapturedCall } from "../../replay/selection.js";
import { checkSideEffects, replayedTool } from "../../replay/side-effects.js";
import { headerCredentials, longestFirst, REDACTED, redactText } from "../../log/redact.js";
import { UsageError } from "../../util/usage-error.js";
import type { RecordHistory } from "./record-history.js";

/** The body of a replay request (params and a header) at most. */
export const MAX_REPLAY_BODY_BYTES = 1024 * 1024;
/** Replays running at once, each a proxy and a session of its own; past it the page is told to wait. */
export const MAX_CONCURRENT_REPLAYS = 3;
/** Characters of the records read to describe one call (its flow and its server's); past it, refused. */
const MAX_LOOKUP_CHARS = 64 * 1024 * 1024;
/** Records parsed to describe one call, at most: finding the call among them is not done in slices. */
const MAX_LOOKUP_RECORDS = 20_000;
/** Calls described lately, kept: the editor checks each edit of the same call as you type. */
const MAX_DESCRIBED = 16;

export interface ReplaySettings {
  /** How the replay's proxy runs (CA, policy, upstream trust, payloads), as for `start`. */
  proxy: Omit<ReplayProxyOptions, "logFile">;
  /**
   * Where its records go: the log of the running proxy, or of `ui --allow-replay` (runningLogStream). One
   * sink for all replays: a log has one writer, so replays running at once could not each open the file.
   */
  records: NodeJS.WritableStream;
  timeoutMs: number;
}

export type ReplayActionName = "replay" | "replay-check";

export interface ReplayActions {
  handle(action: ReplayActionName, body: string): Promise<{ status: number; body: unknown }>;
}

interface ReplayRequest {
  call: string;
  /** Edited params; absent: the captured ones. */
  params?: Record<string, unknown>;
  /** One header sent with this replay only (a credential): never recorded, never sent back. */
  header?: string;
  /** The person confirmed a tool that may change things. */
  confirmed: boolean;
}

export function replayActions(history: RecordHistory, settings: ReplaySettings): ReplayActions {
  const schemas = new SchemaCompiler();
  const described = new Map<string, Promise<CapturedCall>>();
  let running = 0;
  const describe = (selector: string): Promise<CapturedCall> => {
    const hit = described.get(selector);
    if (hit) return hit;
    // One lookup at a time, and none beside a download or a token count: each holds a parsed copy of records.
    const call = oneHeldPassAtATime(() => capturedCall(history, selector));
    described.set(selector, call);
    // A failed lookup is not kept: the call may be in the records later.
    call.catch(() => {
      if (described.get(selector) === call) described.delete(selector);
    });
    if (described.size > MAX_DESCRIBED) described.delete(described.keys().next().value as string);
    return call;
  };

  // Of the tool the params name: an edit may name another tool than the captured call did.
  const check = (call: CapturedCall, params: Record<string, unknown> | undefined) => {
    const { tool, definition } = replayedTool(call, params);
    const effects = checkSideEffects(call.method, tool, definition);
    return {
      call: call.selector,
      method: call.method,
      tool,
      transport: call.transport,
      confirm: effects.question === null ? null : { tool: tool ?? "(unnamed tool)", destructive: effects.destructive, reason: effects.reason },
      schema: schemaCheck(schemas, call.method, tool, definition, params),
    };
  };

  return {
    async handle(action, body) {
      const request = parseReplayRequest(body);
      if (typeof request === "string") return { status: 400, body: { ok: false, error: request } };
      let typed: string[] = [];
      try {
        // A check (as the person types) may use the description made for the last one; a replay is judged by
        // the records as they are now: the server may have listed its tools again (no longer read-only).
        if (action !== "replay-check") described.delete(request.call);
        const call = await describe(request.call);
        const params = request.params ?? call.params;
        if (action === "replay-check") return { status: 200, body: { ok: true, ...check(call, params) } };
        if (call.transport === "stdio") {
          throw new UsageError(`${call.selector} went over stdio: replay it from a terminal, mcp-wiretap replay LOG --call '${call.selector}' --stdio -- <command>`);
        }
        if (request.params === undefined && call.paramsProblem !== null) throw new UsageError(`${call.selector}: ${call.paramsProblem}: use Edit and replay to give them`);
        const checked = check(call, params);
        if (checked.confirm !== null && !request.confirmed) {
          return { status: 409, body: { ok: false, error: `needs a confirmation: ${checked.confirm.reason}`, confirm: checked.confirm } };
        }
        if (running >= MAX_CONCURRENT_REPLAYS) return { status: 429, body: { ok: false, error: `${MAX_CONCURRENT_REPLAYS} replays are running: try again when one has finished` } };
        const headers = parseHeaders(request.header ? [request.header] : []);
        // The value as typed and the credential inside it (a Bearer token without its scheme, a Basic
        // password), as the replay's proxy removes them from its records: a server may quote either.
        typed = longestFirst([...Object.values(headers), ...headerCredentials(headers)]);
        const url = targetUrl(call, undefined);
        running++;
        try {
          const transport = call.transport as "streamable-http" | "http+sse";
          const result = await replayOverHttp({ transport, url, headers, replayOf: call.selector, timeoutMs: settings.timeoutMs }, sessionPlan(call, params), { ...settings.proxy, logFile: settings.records });
          // The answer itself is not sent back: the page shows it as recorded (masked) from its feed.
          return { status: 200, body: { ok: true, replayOf: call.selector, answered: Object.hasOwn(result.answer.message, "error") ? "error" : "result" } };
        } finally {
          running--;
        }
      } catch (err) {
        if (err instanceof UsageError) return { status: 422, body: { ok: false, error: err.message } };
        // Not answered: the exchange failed (refused, timed out, cut). The message may quote the server's
        // answer: masked as free text in a record is, and the typed header's value removed should it be quoted.
        const message = err instanceof ReplayError ? err.message : `${(err as Error).name}: ${(err as Error).message}`;
        return { status: 502, body: { ok: false, error: typed.reduce((text, v) => text.split(v).join(REDACTED), redactText(message)) } };
      }
    },
  };
}

/** Reads `{call, params?, header?, confirmed?}`; a string says what is wrong. */
function parseReplayRequest(text: string): ReplayRequest | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "the body is not JSON";
  }
  const v = obj(value);
  if (!v || Array.isArray(value)) return "expected {call, params?, header?, confirmed?}";
  if (typeof v.call !== "string" || v.call.length > 512) return "call: the request's <flow>#<id>";
  if (v.params !== undefined && (obj(v.params) === undefined || Array.isArray(v.params))) return "params: a JSON object";
  if (v.header !== undefined && typeof v.header !== "string") return "header: 'Name: value'";
  return {
    call: v.call,
    ...(v.params !== undefined ? { params: v.params as Record<string, unknown> } : {}),
    ...(typeof v.header === "string" && v.header.trim() !== "" ? { header: v.header } : {}),
    confirmed: v.confirmed === true,
  };
}

/**
 * The call as src/replay/selection.ts describes it, from the records this UI holds: only the lines of its
 * flow and of its server are parsed (found by their text first), so a long history costs a string search.
 * Searched and parsed a slice per turn of the event loop: the UI may run in the proxy (`start --ui`), whose
 * exchanges must not wait for a lookup through a server's many (or large) records.
 */
async function capturedCall(history: RecordHistory, selector: string): Promise<CapturedCall> {
  const hash = selector.lastIndexOf("#");
  const flow = hash > 0 ? selector.slice(0, hash) : "";
  if (flow.length < 8) return findBySelector([], selector);
  const { lines } = history.slice(history.start);
  const flowText = `"flow":${JSON.stringify(flow).slice(0, -1)}`;
  const own = await parseLines(await linesWithInTurns(lines, (l) => l.includes(flowText)));
  const server = own.map((r) => r.server).find((s): s is string => typeof s === "string");
  if (server === undefined) return findBySelector([], selector);
  const serverText = `"server":${JSON.stringify(server)}`;
  // Of the server's other records, only what describes the call: its sessions' handshakes, its tools/list
  // answers (the tools' definitions) and its GET streams (a legacy session's URL), not every exchange.
  const describes = (l: string): boolean => l.includes(serverText) && (l.includes('"event":"session"') || l.includes('"method":"tools/list"') || (l.includes('"event":"http"') && l.includes('"method":"GET"')));
  return findBySelector(await parseLines(await linesWithInTurns(lines, (l) => l.includes(flowText) || describes(l))), selector);
}

async function parseLines(lines: readonly string[]): Promise<LogRecord[]> {
  let chars = 0;
  const out: LogRecord[] = [];
  await eachLineInTurns(lines, (line, i) => {
    chars += line.length;
    if (chars > MAX_LOOKUP_CHARS || i >= MAX_LOOKUP_RECORDS) throw new UsageError(`the records of this call and its server pass ${MAX_LOOKUP_CHARS / 1024 / 1024} MiB or ${MAX_LOOKUP_RECORDS} records in this UI: replay it with mcp-wiretap replay LOG --call …`);
    const record = parseRecord(line);
    if (record) out.push(record);
  });
  return out;
}

/** The params checked against the named tool's captured inputSchema: the errors, or why they were not checked. */
function schemaCheck(schemas: SchemaCompiler, method: string, tool: string | null, definition: Record<string, unknown> | null, params: Record<string, unknown> | undefined): { errors: string[] } | { unchecked: string } {
  if (method !== "tools/call") return { unchecked: `${method} has no tool schema` };
  const schema = obj(definition?.inputSchema);
  if (!schema) return { unchecked: `the capture holds no inputSchema of ${tool ?? "an unnamed tool"} (no tools/list result)` };
  const errors: string[] = [];
  const compiled = schemas.compile(schema);
  if ("unchecked" in compiled) return { unchecked: `inputSchema not checked: ${compiled.unchecked}` };
  const args = params?.arguments ?? {};
  const validate: ValidateFunction = compiled.validate;
  if (!validate(args)) for (const e of validate.errors ?? []) errors.push(`arguments${e.instancePath.replace(/\//g, ".")}: ${e.message ?? e.keyword}`);
  return { errors };
}

/**
 * A replay's records into a running proxy's log (through its sink: chained, teed to the live feed): the
 * records of its exchanges, not its own proxy's `start` and `stop` (the log's lifecycle is the running proxy's).
 */
export function runningLogStream(writeLine: (line: string) => void): NodeJS.WritableStream {
  const write = (chunk: string | Uint8Array): boolean => {
    const line = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    const event = parseRecord(line)?.event;
    if (event !== "start" && event !== "stop") writeLine(line);
    return true;
  };
  return { write } as unknown as NodeJS.WritableStream;
}
