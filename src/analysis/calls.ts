import { opposite } from "../mcp/correlator.js";
import { num, obj, str, type LogRecord } from "../saved-logs/filters.js";

export type Outcome = "ok" | "error" | "tool_error" | "unanswered" | "cancelled" | "open";
export type Verdict = "allow" | "flag" | "deny";

/**
 * One logical call: a request and what answered it. A multi-round request (2026-07-28: results with
 * `resultType: "input_required"`, retried by the client with a new id) is one call over all its rounds.
 */
export interface Call {
  server: string | null;
  session: string | null;
  flow: string | null;
  transport: string | null;
  protocolVersion: string | null;
  /** Direction of the request. */
  direction: string | null;
  /** A call made as a task: the task id (its tasks/* requests, status notifications and result belong to the call). */
  taskId: string | null;
  /** Id of the first round's request. */
  id: unknown;
  method: string | null;
  tool: string | null;
  argsHash: string | null;
  /** `<flow>#<id>` of the captured request this call replayed (`mcp-wiretap replay`), or null. */
  replayOf: string | null;
  /** Every record of the call, in log order: requests, answers, cancellation. */
  records: LogRecord[];
  /** The first request's record; null when only an answer is in the log (the request came before it). */
  request: LogRecord | null;
  rounds: number;
  outcome: Outcome;
  /** Sum of the rounds' `latencyMs` (time the peer took); for a task, the time to its terminal state; null when no round was answered. */
  latencyMs: number | null;
  requestBytes: number;
  responseBytes: number;
  /** The strictest policy decision on any of its records. */
  decision: Verdict;
  firstSeen: string | null;
  lastSeen: string | null;
}

const ANSWERS = new Set(["response", "error", "unanswered"]);
const RANK: Record<Verdict, number> = { allow: 0, flag: 1, deny: 2 };

/** The requests of a log tied to their answers (the log's own correlation, replayed from its records). */
export function buildCalls(records: readonly LogRecord[]): Call[] {
  const pairing = new CallPairing();
  for (const r of records) pairing.add(r);
  return pairing.calls;
}

/** The calls of records given one at a time, in log order (so a long log can be paired in turns of the loop). */
export class CallPairing {
  readonly calls: Call[] = [];
  /** Requests awaiting their answer, by (server, direction, id); a list, as ids repeat across sessions. */
  private readonly pending = new Map<string, { call: Call; request: LogRecord }[]>();
  private readonly byCallId = new Map<string, Call>();

  private open(key: string, call: Call, request: LogRecord): void {
    const list = this.pending.get(key) ?? [];
    list.push({ call, request });
    this.pending.set(key, list);
  }

  add(r: LogRecord): void {
    const { calls, pending, byCallId } = this;
    if (r.event !== "rpc") return;
    const kind = str(r.kind);
    const direction = str(r.direction);
    const callId = str(r.call);
    const taskCall = obj(r.task) && callId !== null ? byCallId.get(callId) : undefined;
    // Before the answer that creates the task, only its status notifications can come.
    if (taskCall && (taskCall.taskId !== null || kind === "notification") && obj(r.task)?.created !== true) {
      onTask(taskCall, r, kind);
      return;
    }
    if (kind === "request" && r.id !== null && r.id !== undefined) {
      // A retry of a multi-round call carries its round; a request that asks for a task starts a call of its own.
      const joined = callId === null || r.round === undefined ? undefined : byCallId.get(callId);
      const call = joined ?? newCall(r);
      if (joined) joined.rounds++;
      else calls.push(call);
      // A request that asked for a task names its call: what the task brings later joins it.
      if (callId !== null && !joined) byCallId.set(callId, call);
      joinRecord(call, r);
      call.requestBytes += num(r.bytes) ?? 0;
      this.open(key(r.server, direction, r.id), call, r);
    } else if (kind !== null && ANSWERS.has(kind)) {
      const requestDirection = kind === "unanswered" ? direction : opposite(direction);
      const list = pending.get(key(r.server, requestDirection, r.id)) ?? [];
      const at = findLast(list, (p) => sameExchange(p.request, r));
      let call: Call;
      if (at >= 0) {
        call = list.splice(at, 1)[0]!.call;
      } else {
        call = newCall(r);
        call.direction = requestDirection;
        calls.push(call);
      }
      joinRecord(call, r);
      answer(call, r, kind);
      if (callId !== null && str(r.resultType) === "input_required") byCallId.set(callId, call);
    } else if (kind === "notification" && str(r.method) === "notifications/cancelled") {
      const rel = obj(r.related);
      if (!rel) return;
      const list = pending.get(key(r.server, direction, rel.id)) ?? [];
      const at = findLast(list, (p) => sameExchange(p.request, r));
      if (at < 0) return;
      const call = list[at]!.call;
      joinRecord(call, r);
      if (call.outcome === "open") call.outcome = "cancelled";
    }
  }
}

/** A record of a call made as a task, after its creation: the call ends where the task reached its terminal state. */
function onTask(call: Call, r: LogRecord, kind: string | null): void {
  joinRecord(call, r);
  if (kind === "request") call.requestBytes += num(r.bytes) ?? 0;
  else call.responseBytes += num(r.bytes) ?? 0;
  const task = obj(r.task)!;
  ended(call, task);
  if (task.final === true && call.outcome !== "cancelled") call.outcome = kind === "error" ? "error" : isToolError(r) ? "tool_error" : "ok";
  if (kind === "unanswered" && call.outcome === "open") call.outcome = "unanswered";
}

/** The task reached its terminal state: the call's latency and outcome. */
function ended(call: Call, task: Record<string, unknown>): void {
  const end = obj(task.end);
  if (!end) return;
  call.latencyMs = num(end.callLatencyMs);
  const status = str(end.status);
  call.outcome = status === "cancelled" ? "cancelled" : status === "failed" ? "error" : "ok";
}

function newCall(r: LogRecord): Call {
  return {
    server: str(r.server),
    session: str(r.session),
    flow: str(r.flow),
    transport: str(r.transport),
    protocolVersion: str(r.protocolVersion),
    direction: str(r.direction),
    taskId: null,
    id: r.id,
    method: str(r.method),
    tool: str(r.tool),
    argsHash: str(r.argsHash),
    replayOf: str(r.replayOf),
    records: [],
    request: str(r.kind) === "request" ? r : null,
    rounds: 1,
    outcome: "open",
    latencyMs: null,
    requestBytes: 0,
    responseBytes: 0,
    decision: "allow",
    firstSeen: null,
    lastSeen: null,
  };
}

function joinRecord(call: Call, r: LogRecord): void {
  call.records.push(r);
  const time = str(r.time);
  call.firstSeen ??= time;
  if (time !== null) call.lastSeen = time;
  call.session ??= str(r.session);
  call.protocolVersion ??= str(r.protocolVersion);
  call.method ??= str(r.method);
  call.tool ??= str(r.tool);
  const action = str(obj(r.decision)?.action);
  if (action === "flag" || action === "deny") {
    if (RANK[action] > RANK[call.decision]) call.decision = action;
  }
}

function answer(call: Call, r: LogRecord, kind: string): void {
  const task = obj(r.task);
  if (task?.created === true && kind === "response") {
    // The answer created a task: the call runs on until the task ends.
    call.taskId = str(task.id);
    call.responseBytes += num(r.bytes) ?? 0;
    ended(call, task);
    return;
  }
  if (kind === "unanswered") {
    if (call.outcome !== "cancelled") call.outcome = "unanswered";
    return;
  }
  call.responseBytes += num(r.bytes) ?? 0;
  const latency = num(r.latencyMs);
  if (latency !== null) call.latencyMs = (call.latencyMs ?? 0) + latency;
  if (str(r.resultType) === "input_required") {
    // The client retries with a new id: until it does, the call waits for it.
    if (call.outcome !== "cancelled") call.outcome = "open";
    return;
  }
  if (call.outcome === "cancelled") return;
  call.outcome = kind === "error" ? "error" : isToolError(r) ? "tool_error" : "ok";
}

/** A tool result with `isError: true` (the record's own flag, or the logged result when it has one). */
export function isToolError(r: LogRecord): boolean {
  return r.isError === true || obj(r.result)?.isError === true;
}

/** Same request: the same exchange, or the same named session (legacy answers travel on another exchange). */
function sameExchange(request: LogRecord, other: LogRecord): boolean {
  if (request.flow === other.flow) return true;
  return typeof other.session === "string" && other.session === request.session;
}

function key(server: unknown, direction: string | null, id: unknown): string {
  return JSON.stringify([server ?? null, direction, typeof id === "number" ? `n:${id}` : typeof id === "string" ? `s:${id}` : JSON.stringify(id)]);
}

function findLast<T>(list: readonly T[], match: (t: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (match(list[i]!)) return i;
  return -1;
}
