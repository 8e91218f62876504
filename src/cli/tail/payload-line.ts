import { printable, type Paint } from "../../saved-logs/color.js";
import { clip } from "../../saved-logs/layout.js";
import { num, obj, str, type LogRecord } from "../../saved-logs/filters.js";
import { selectorOf } from "../../saved-logs/selector.js";

/** Where the TEXT column starts in a row (see layout.ts `row`): detail lines are indented to it. */
export const TEXT_COLUMN = 63;
/** A detail line shows at most this many characters of the payload. */
export const DETAIL_CHARS = 120;

/**
 * `tail -v`: what a message carried, on one indented line under it — a tool call's arguments, a tool
 * result's text (its JSON when not all text), other params, results and errors as JSON. Null when the
 * record has no payload.
 */
export function payloadLine(p: Paint, r: LogRecord): string | null {
  const kind = str(r.kind);
  const field = kind === "request" || kind === "notification" ? "params" : kind === "response" ? "result" : kind === "error" ? "error" : kind === "invalid" ? "message" : null;
  if (field === null || !(field in r)) return null;
  const text = describe(r[field], r, field);
  if (text === null) return null;
  return `${" ".repeat(TEXT_COLUMN)}${p("dim", `${field === "params" && r.method === "tools/call" ? "args" : field} `)}${printable(clip(text, DETAIL_CHARS))}`;
}

/**
 * `tail -v`: under a client's request, the selector `mcp-wiretap replay --call` takes (`<flow>#<id>`); under
 * a replay's, also what it replayed.
 */
export function callLine(p: Paint, r: LogRecord): string | null {
  if (r.kind !== "request" || r.direction !== "client_to_server" || typeof r.flow !== "string" || (typeof r.id !== "number" && typeof r.id !== "string")) return null;
  const replayOf = str(r.replayOf);
  return `${" ".repeat(TEXT_COLUMN)}${p("dim", "call ")}${printable(selectorOf(r.flow, r.id))}${replayOf ? p("cyan", printable(`  ↻ replay of ${replayOf}`)) : ""}`;
}

function describe(value: unknown, r: LogRecord, field: string): string | null {
  const shaped = obj(value);
  if (shaped?.omitted === true) return `(not recorded: ${num(shaped.bytes) ?? "?"} bytes)`;
  if (shaped?.truncated === true && typeof shaped.preview === "string") return shaped.preview;
  if (r.method === "tools/call" && field === "params") return json(shaped?.arguments ?? {});
  if (r.method === "tools/call" && field === "result" && Array.isArray(shaped?.content)) {
    const content = shaped.content.map(obj);
    if (content.length > 0 && content.every((c) => c?.type === "text" && typeof c.text === "string")) {
      return content.map((c) => c!.text as string).join(" ⏎ ").replace(/\n/g, " ⏎ ");
    }
  }
  return json(value);
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
