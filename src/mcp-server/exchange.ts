import { buildCalls, type Call } from "../analysis/calls.js";
import { errorText, num, obj, str, type LogRecord } from "../saved-logs/filters.js";
import { selectorOf } from "../saved-logs/selector.js";
import { LIMITS, shownAs, ToolInputError, type ShownRecord } from "./bounded.js";
import type { HeldRecord, RecordIndex } from "./record-index.js";

/** A call as the tools describe it: what was asked, what came back, how it was judged, how long it took. */
export interface ExchangeView {
  selector: string | null;
  server: string | null;
  session: string | null;
  transport: string | null;
  protocolVersion: string | null;
  method: string | null;
  tool: string | null;
  outcome: Call["outcome"];
  /** The strictest policy decision on any of its records. */
  decision: Call["decision"];
  /** The answer's error (`code: message`), or why it was never answered. */
  error: string | null;
  latencyMs: number | null;
  rounds: number;
  firstSeen: string | null;
  lastSeen: string | null;
  /** HTTP status of the request's exchange (null over stdio, or when the log has no http record of it). */
  httpStatus: number | null;
  /** Every rule that matched a record of the call, with its findings. */
  rules: LogRecord[];
  /** The request, its answers, progress and cancellation, in log order. */
  records: ShownRecord[];
  /** The http record of the request's exchange. */
  http: ShownRecord | null;
}

export interface ExchangeInput {
  selector: string;
  maxRecordBytes?: number;
}

/** `get_exchange`: the call a selector (`<flow>#<id>`, the flow may be cut to 8 or more characters) names. */
export async function getExchange(index: RecordIndex, input: ExchangeInput): Promise<ExchangeView> {
  const { flow, id } = parseSelector(input.selector);
  let request: HeldRecord | undefined;
  for (const held of index.newestFirst()) {
    const h = held.head;
    if (h.event === "rpc" && h.kind === "request" && typeof h.flow === "string" && h.flow.startsWith(flow) && idText(h.id) === id) {
      request = held;
      break;
    }
  }
  if (!request) throw new ToolInputError(`${input.selector}: no request with that flow and id in the served logs (search_messages shows each request's selector)`);
  // The call's records share the request's exchange or session (or, for later rounds, its `call`), and follow it.
  const { server, session } = request.head;
  const flowOf = request.head.flow as string;
  const related: LogRecord[] = [];
  for (let i = request.index; i < index.end; i++) {
    const h = index.at(i)!.head;
    if (h.server === server && (h.flow === flowOf || (typeof session === "string" && h.session === session) || (typeof h.call === "string" && h.call.startsWith(`${flowOf}#`)))) related.push(h);
  }
  const calls = buildCalls(related);
  const call = calls.find((c) => c.request === request.head);
  if (!call) throw new ToolInputError(`${input.selector}: the request is no longer held`);
  return describeCall(index, call, input.maxRecordBytes ?? LIMITS.maxRecordBytes.default);
}

export async function describeCall(index: RecordIndex, call: Call, maxRecordBytes: number): Promise<ExchangeView> {
  const held = [...call.records, ...progressOf(index, call)].map((h) => index.heldOf(h)).filter((h): h is HeldRecord => h !== undefined);
  held.sort((a, b) => a.index - b.index);
  const http = call.flow === null ? undefined : httpRecordOf(index, call.flow, held[0]?.index ?? 0);
  // Every record is read (its rules are shown even when the record is shown by its head).
  const reads = await index.readMany(http ? [...held, http] : held);
  const parsed = reads.slice(0, held.length).flatMap((r) => ("record" in r ? [r.record] : []));
  const httpRead = http ? reads.at(-1)! : null;
  const answer = [...call.records].reverse().find((r) => r.kind === "error" || r.kind === "unanswered" || r.kind === "response");
  return {
    selector: call.request && call.flow !== null && (typeof call.id === "string" || typeof call.id === "number") ? selectorOf(call.flow, call.id) : null,
    server: call.server,
    session: call.session,
    transport: call.transport,
    protocolVersion: call.protocolVersion,
    method: call.method,
    tool: call.tool,
    outcome: call.outcome,
    decision: call.decision,
    error: answer === undefined ? null : answer.kind === "error" ? errorText(obj(answer.error) ?? {}) || "(error not recorded)" : answer.kind === "unanswered" ? `unanswered: ${str(answer.reason) ?? "no reason given"}` : answer.isError === true ? "tool result has isError: true" : null,
    latencyMs: call.latencyMs,
    rounds: call.rounds,
    firstSeen: call.firstSeen,
    lastSeen: call.lastSeen,
    httpStatus: httpRead !== null && "record" in httpRead ? num(httpRead.record.status) : null,
    rules: parsed.flatMap((r) => (Array.isArray(obj(r.decision)?.rules) ? (obj(r.decision)!.rules as unknown[]).map((x) => obj(x)).filter((x): x is LogRecord => x !== undefined) : [])),
    records: held.map((h, i) => shownAs(h, h.bytes <= maxRecordBytes ? reads[i]! : null)),
    http: http ? shownAs(http, http.bytes <= maxRecordBytes ? httpRead : null) : null,
  };
}

/** Progress notifications about the call's request (they may travel on another exchange of the session). */
function progressOf(index: RecordIndex, call: Call): LogRecord[] {
  if (call.request === null) return [];
  const first = index.heldOf(call.request)?.index ?? 0;
  const last = index.heldOf(call.records.at(-1)!)?.index ?? first;
  const out: LogRecord[] = [];
  for (let i = first + 1; i < last; i++) {
    const h = index.at(i)?.head;
    if (!h || h.method !== "notifications/progress" || h.server !== call.server) continue;
    const related = obj(h.related);
    if (related && related.id === call.id && (h.flow === call.flow || (h.session !== null && h.session === call.session))) out.push(h);
  }
  return out;
}

/** The http record of an exchange: written when it ends, so after its messages. */
function httpRecordOf(index: RecordIndex, flow: string, from: number): HeldRecord | undefined {
  for (let i = from; i < index.end; i++) {
    const h = index.at(i);
    if (h?.head.event === "http" && h.head.flow === flow) return h;
  }
  return undefined;
}

function parseSelector(selector: string): { flow: string; id: string } {
  const hash = selector.lastIndexOf("#");
  if (hash <= 0 || hash === selector.length - 1) throw new ToolInputError(`selector ${JSON.stringify(selector)}: expected <flow>#<id>, as search_messages shows it`);
  const flow = selector.slice(0, hash);
  if (flow.length < 8) throw new ToolInputError(`selector ${selector}: give at least 8 characters of the flow`);
  return { flow, id: selector.slice(hash + 1) };
}

/** An id as a selector writes it (a string bare unless it reads like a number or a quoted string). */
function idText(id: unknown): string | null {
  if (typeof id !== "string" && typeof id !== "number") return null;
  const s = selectorOf("", id);
  return s.slice(1);
}
