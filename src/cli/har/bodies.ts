import { header, num, obj, str, type LogRecord } from "../../saved-logs/filters.js";
import type { HarEntry } from "./har-format.js";

/**
 * Bodies rebuilt from an exchange's `rpc` records, since the log keeps messages, not bytes. A payload the
 * log holds only in part is shown as far as it goes, with a `[mcp-wiretap: …]` note, and sets `incomplete`.
 */

/** Set when a rebuilt body shows a payload the log truncated or left out. */
export interface IncompleteFlag {
  value: boolean;
}

interface Body {
  text: string;
  notes: string[];
}

const PAYLOAD_FIELD: Record<string, string> = { request: "params", notification: "params", response: "result", error: "error" };

/** The request body from the client's messages (JSON), or a comment on why there is none. */
export function requestPostData(r: LogRecord, messages: LogRecord[], incomplete: IncompleteFlag): HarEntry["request"]["postData"] {
  const sent = messages.filter((m) => m.direction === "client_to_server" && isWireMessage(m));
  const requestType = header(r.requestHeaders, "content-type") ?? "";
  const requestBytes = num(r.requestBytes) ?? -1;
  if (sent.length > 0) {
    const body = jsonBody(sent, incomplete);
    return { mimeType: requestType || "application/json", text: body.text, ...(body.notes.length > 0 ? { comment: body.notes.join(" ") } : {}) };
  }
  if (requestBytes > 0) return { mimeType: requestType, text: "", comment: noMessageNote(requestBytes) };
  return undefined;
}

/** The response body from the server's messages (SSE for an event stream, else JSON), or a comment on why there is none. */
export function responseContent(r: LogRecord, messages: LogRecord[], incomplete: IncompleteFlag): HarEntry["response"]["content"] {
  const received = messages.filter((m) => m.direction === "server_to_client" && isWireMessage(m));
  const responseType = header(r.responseHeaders, "content-type") ?? "";
  const responseBytes = num(r.responseBytes) ?? -1;
  const content: HarEntry["response"]["content"] = { size: Math.max(0, responseBytes), mimeType: responseType };
  if (received.length > 0) {
    const body = /text\/event-stream/i.test(responseType) ? sseBody(received, incomplete) : jsonBody(received, incomplete);
    content.text = body.text;
    if (body.notes.length > 0) content.comment = body.notes.join(" ");
  } else if (str(r.statusSource) === "proxy") {
    const denied = messages.find((m) => obj(m.decision)?.enforced === true);
    const effect = str(obj(denied?.decision)?.effect);
    content.comment = `mcp-wiretap: answered by the proxy itself${effect ? ` (${effect})` : ""}; that answer is not in the log.`;
  } else if (responseBytes > 0) {
    content.comment = noMessageNote(responseBytes);
  }
  const legacyStream = messages.find((m) => m.transport === "http+sse" && m.direction === "server_to_client" && m.flow === r.flow);
  if (legacyStream && str(r.method) === "GET") {
    const endpoint = str(legacyStream.session);
    const note = `mcp-wiretap: the \`endpoint\` event that opened this legacy (HTTP+SSE) session${endpoint ? ` (${endpoint})` : ""} is not in the log; the messages are.`;
    content.comment = content.comment ? `${content.comment} ${note}` : note;
  }
  return content;
}

function noMessageNote(bytes: number): string {
  return `mcp-wiretap: the ${bytes}-byte body carried no MCP message the log kept; bodies are not logged.`;
}

/** Records that stand for a message on the wire (not the bookkeeping of an unanswered request). */
function isWireMessage(m: LogRecord): boolean {
  const kind = str(m.kind);
  if (kind === "unanswered") return false;
  if (kind === "invalid") return m.message !== undefined;
  return kind !== null;
}

/** JSON: one message as itself, a batch as an array; consecutive batches and lone messages one per line. */
function jsonBody(messages: LogRecord[], incomplete: IncompleteFlag): Body {
  const notes: string[] = [];
  const parts = groups(messages).map((group) => groupText(group, notes, incomplete));
  return { text: parts.join("\n"), notes: unique(notes) };
}

/** SSE: one `event: message` per message (a batch as one event with an array), in order. */
function sseBody(messages: LogRecord[], incomplete: IncompleteFlag): Body {
  const notes: string[] = [];
  const text = groups(messages)
    .map((group) => {
      const data = groupText(group, notes, incomplete);
      const id = str(group[0]!.sseEventId);
      return `event: message\n${id !== null ? `id: ${id}\n` : ""}${data.split("\n").map((line) => `data: ${line}`).join("\n")}\n\n`;
    })
    .join("");
  return { text, notes: unique(notes) };
}

/** Consecutive members of one batch together; other messages alone. */
function groups(messages: LogRecord[]): LogRecord[][] {
  const out: LogRecord[][] = [];
  for (const m of messages) {
    const batch = obj(m.batch);
    const last = out.at(-1);
    const lastBatch = last ? obj(last[0]!.batch) : undefined;
    if (batch && last && lastBatch && num(batch.index) !== 0 && num(batch.size) === num(lastBatch.size) && last.length < (num(lastBatch.size) ?? 0) && str(last[0]!.sseEventId) === str(m.sseEventId)) {
      last.push(m);
    } else {
      out.push([m]);
    }
  }
  return out;
}

/** A group's JSON: a batch as an array, a lone message as itself. */
function groupText(group: LogRecord[], notes: string[], incomplete: IncompleteFlag): string {
  const texts = group.map((m) => messageText(m, notes, incomplete));
  return group.length > 1 || obj(group[0]!.batch) ? `[${texts.join(",")}]` : texts[0]!;
}

/** The JSON text of a logged message, as the peer sent it (up to member order and whitespace). */
function messageText(m: LogRecord, notes: string[], incomplete: IncompleteFlag): string {
  const kind = str(m.kind)!;
  if (kind === "invalid") {
    return payloadText(m.message, notes, incomplete, "the invalid message") ?? "";
  }
  const head: Record<string, unknown> = { jsonrpc: "2.0" };
  if (kind !== "notification") head.id = m.id ?? null;
  if (kind === "request" || kind === "notification") head.method = str(m.method) ?? "";
  const field = PAYLOAD_FIELD[kind];
  const open = JSON.stringify(head).slice(0, -1);
  if (field === undefined || !(field in m)) return `${open}}`;
  const text = payloadText(m[field], notes, incomplete, field);
  return text === null ? `${open}}` : `${open},${JSON.stringify(field)}:${text}}`;
}

/** A payload's JSON, or its preview and a note when the log holds only part of it. */
function payloadText(value: unknown, notes: string[], incomplete: IncompleteFlag, what: string): string | null {
  if (value === undefined) return null;
  const marker = obj(value);
  const partial = marker && partialPayload(marker, what);
  if (partial) {
    incomplete.value = true;
    notes.push(partial.note);
    return partial.text;
  }
  return JSON.stringify(value) ?? null;
}

/** What stands in for a payload the log truncated, omitted or could not serialise; undefined for a whole one. */
function partialPayload(marker: LogRecord, what: string): { text: string; note: string } | undefined {
  const size = num(marker.bytes) ?? "?";
  const hash = str(marker.sha256) ?? "no hash";
  if (marker.truncated === true && typeof marker.preview === "string") {
    return {
      note: `mcp-wiretap: a ${what} was truncated in the log (${size} bytes, ${hash}); its preview is shown, followed by a note.`,
      text: `${marker.preview}…[mcp-wiretap: truncated, ${size} bytes, ${hash}]`,
    };
  }
  if (marker.omitted === true) {
    return {
      note: `mcp-wiretap: a ${what} was left out of the log (${size} bytes, ${hash}).`,
      text: `[mcp-wiretap: omitted, ${size} bytes, ${hash}]`,
    };
  }
  if (marker.unserializable === true) {
    const reason = str(marker.reason) ?? "unserializable";
    return { note: `mcp-wiretap: a ${what} could not be logged (${reason}).`, text: `[mcp-wiretap: not logged: ${reason}]` };
  }
  return undefined;
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}
