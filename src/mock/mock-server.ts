/**
 * The answers of a mock server, whatever carries them: each client message in, the messages that answer it
 * out, with the delay before each. Ids are the client's; a progress token is the client's.
 */
import { CallMatcher, type MatchMode } from "./matcher.js";
import { LIST_METHODS, listKey, type Message, type Recording } from "./recording.js";

export interface Reply {
  /** Wait this long after the message before sending this reply (ms). */
  atMs: number;
  message: Message;
}

/** JSON-RPC codes the mock answers with. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;
/** No recorded call matches (server-defined range). */
export const NO_RECORDED_CALL = -32001;
/** Least time between the last progress of a call and its answer. */
const ANSWER_AFTER_PROGRESS_MS = 20;

export class MockServer {
  private readonly matcher: CallMatcher;

  constructor(
    private readonly recording: Recording,
    mode: MatchMode,
    /** Playback rate of recorded timing: 1 as recorded, 2 twice as fast, 0 no waiting. */
    private readonly speed: number,
  ) {
    this.matcher = new CallMatcher(recording.calls, mode);
  }

  get name(): string {
    return this.recording.name;
  }

  /** The replies to one line or body: a message, or a batch of them. */
  receiveText(text: string): Reply[] {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return [{ atMs: 0, message: errorMessage(null, PARSE_ERROR, "not JSON") }];
    }
    const list = Array.isArray(value) ? value : [value];
    return list.flatMap((m) => this.receive(m));
  }

  receive(value: unknown): Reply[] {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return [{ atMs: 0, message: errorMessage(null, INVALID_REQUEST, "not a JSON-RPC message") }];
    const m = value as Message;
    const id = m.id;
    if (typeof m.method !== "string") return []; // a response to a server request: the mock sends none
    if (id === undefined || id === null) return []; // a notification
    const params = m.params !== null && typeof m.params === "object" && !Array.isArray(m.params) ? (m.params as Message) : undefined;
    if (m.method === "initialize") return [{ atMs: 0, message: result(id, this.recording.initialize) }];
    if (m.method === "ping") return [{ atMs: 0, message: result(id, {}) }];
    if (LIST_METHODS.has(m.method)) {
      const answer = this.recording.lists.get(listKey(m.method, params));
      return [{ atMs: 0, message: answer ? { jsonrpc: "2.0", id, ...answer } : errorMessage(id, METHOD_NOT_FOUND, `the capture holds no ${m.method} result${params?.cursor !== undefined ? " for this cursor" : ""}`) }];
    }
    const found = this.matcher.match(m.method, params);
    if (found.call === null) {
      return [{ atMs: 0, message: errorMessage(id, NO_RECORDED_CALL, found.explain, { nearest: found.nearest?.selector ?? null, differing: found.differing }) }];
    }
    const call = found.call;
    if (call.answer === null) return [{ atMs: 0, message: errorMessage(id, INTERNAL_ERROR, `the recorded call ${call.selector} cannot be served: ${call.problem ?? "no answer"}`) }];
    const token = (params?._meta as Message | undefined)?.progressToken;
    const progress =
      token === undefined
        ? []
        : call.progress.map((p) => ({ atMs: this.scaled(p.atMs), message: { jsonrpc: "2.0", method: "notifications/progress", params: { ...p.params, progressToken: token } } }));
    // With progress, the answer keeps its recorded place after the last one (a little after at least:
    // clients such as the SDK's handle progress asynchronously and stop listening once the answer is in);
    // without, it goes at once.
    const at = progress.length === 0 ? 0 : Math.max(progress.at(-1)!.atMs + ANSWER_AFTER_PROGRESS_MS, this.scaled(call.latencyMs));
    return [...progress, { atMs: at, message: { jsonrpc: "2.0", id, ...call.answer } }];
  }

  private scaled(ms: number): number {
    return this.speed === 0 ? 0 : Math.max(0, ms / this.speed);
  }
}

function result(id: unknown, value: unknown): Message {
  return { jsonrpc: "2.0", id, result: value };
}

function errorMessage(id: unknown, code: number, message: string, data?: unknown): Message {
  return { jsonrpc: "2.0", id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
}
