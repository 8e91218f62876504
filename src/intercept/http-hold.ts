import type { Charge } from "../budget/inspect-budget.js";
import { answerClient } from "../mcp/enforce.js";
import type { McpFlow } from "../mcp/flow.js";
import { DROPPED_EVENT, droppedError, isEnforcedDeny, policyError, replacementForServerMessage, sseEvent } from "../mcp/replies.js";
import type { Judged, RpcEvent } from "../mcp/rpc-event.js";
import type { MessageHandler } from "../mcp/tracker.js";
import type { RequestHold, RequestVerdict } from "../proxy/exchange.js";
import { peerKey } from "../proxy/peer-key.js";
import type { HeldPlace, Interceptor } from "./interceptor.js";
import type { InterceptHooks } from "../mcp/intercept-hooks.js";
import type { ServerAnswers } from "./server-answer.js";

export interface HttpInterceptOptions {
  /** Without an enforce-mode hold to wrap: the body held up to this size (a larger one passes, as in monitor mode). */
  maxBytes: number;
  charge?: Charge;
}

const FORWARD: RequestVerdict = { action: "forward" };

/**
 * `--intercept` on an HTTP request body: once its messages are judged (and, in enforce mode, the enforce hold
 * let it pass), a body with a message the filter selects waits for a person. Forwarded: the bytes judged go out.
 * Edited: the edit is judged and recorded as a message of this exchange, and exactly those bytes go out (or,
 * denied in enforce mode, its requests get the policy error). Dropped or timed out: its requests get
 * error -32054 and the upstream never sees it.
 */
export function interceptedRequestHold(
  interceptor: Interceptor,
  pipeline: MessageHandler,
  flow: McpFlow,
  o: HttpInterceptOptions,
  inner: RequestHold | null,
  judgeEdited: (body: Buffer) => Promise<Judged[]>,
): RequestHold {
  const charge = inner ? inner.charge : o.charge;
  return {
    maxBytes: inner?.maxBytes ?? o.maxBytes,
    ...(charge ? { charge } : {}),
    decide: async (body, why) => {
      const verdict = inner ? await inner.decide(body, why) : FORWARD;
      if (verdict.action !== "forward" || body === null) return verdict;
      const judged = await flow.requestJudgements;
      if (!interceptor.matches(judged)) return verdict;
      const batch = judged.some((j) => j.event.batch !== undefined);
      const messages = judged.filter((j) => j.event.raw !== undefined).map((j) => j.event.raw);
      // What would go out: enforce mode's replacement (the client's denied answers made errors), else what was read.
      const message = verdict.body ? (JSON.parse(verdict.body.toString("utf8")) as unknown) : batch ? messages : messages[0];
      const release = await interceptor.hold({ ...heldPlace(flow), peer: peerKey(flow.ex, "client_to_server") }, judged, message);
      if (release.send === "original") return verdict;
      // The held requests are answered here: dropped, or replaced by the edit (whose own requests are tracked as it is judged).
      const requests = requestsOf(judged);
      for (const r of requests) pipeline.tracker.correlator.answer(r.server, flow.scope, r.direction, r.id!);
      if (release.send === "nothing") return answerClient(flow, requests.map((r) => droppedError(r.id!, release.reason)), batch);
      const bytes = Buffer.from(JSON.stringify(release.message) ?? "null");
      const rejudged = await judgeEdited(bytes);
      const denied = rejudged.filter(isEnforcedDeny);
      if (denied.length > 0) {
        const refused = rejudged.filter((j) => j.event.kind === "request" && j.event.id !== null && j.event.id !== undefined);
        for (const { event: r } of refused) pipeline.tracker.correlator.answer(r.server, flow.scope, r.direction, r.id!);
        return answerClient(flow, refused.map((j) => policyError(j.event.id!, j.decision.enforced ? j.decision : denied[0]!.decision)), Array.isArray(release.message));
      }
      // The edit is plain UTF-8 JSON, whatever the client's body was labelled.
      flow.ex.replaceRequestHeader("content-encoding", "identity");
      flow.ex.replaceRequestHeader("content-type", "application/json");
      return { action: "forward", body: bytes };
    },
  };
}

/** The answers (results and errors) with an id among judged messages: whoever waits for them gets an error if they are dropped. */
function answersOf(judged: readonly Judged[]): RpcEvent[] {
  return judged.map((j) => j.event).filter((e) => (e.kind === "response" || e.kind === "error") && e.id !== null && e.id !== undefined);
}

function requestsOf(judged: readonly Judged[]): RpcEvent[] {
  return judged.map((j) => j.event).filter((e) => e.kind === "request" && e.id !== null && e.id !== undefined);
}

/**
 * `--intercept` on an HTTP JSON response, once its messages are judged: `out` is what would go out instead of
 * the body (enforce mode's replacement), null for the body as received. Returns what goes out instead (sent as
 * `application/json`), null for the body as received. Dropped: each answer in it reaches its client as error
 * -32054. Edited: the edit answers the requests the original answered, is judged and recorded, and goes out
 * (in enforce mode with what the policy denies in it replaced, as for any answer).
 */
export async function interceptedResponse(
  interceptor: Interceptor,
  pipeline: MessageHandler,
  flow: McpFlow,
  judged: readonly Judged[],
  out: Buffer | null,
  judgeEdited: (body: Buffer) => Promise<Judged[]>,
  removeDeniedTools: boolean,
  answers: ServerAnswers | null = null,
): Promise<Buffer | null> {
  if (!interceptor.matches(judged)) return out;
  const batch = judged.some((j) => j.event.batch !== undefined);
  const messages = judged.filter((j) => j.event.raw !== undefined).map((j) => j.event.raw);
  const message = out && out.length > 0 ? (JSON.parse(out.toString("utf8")) as unknown) : batch ? messages : messages[0];
  const release = await interceptor.hold({ ...heldPlace(flow), peer: peerKey(flow.ex, "server_to_client") }, judged, message);
  if (release.send === "original") return out;
  if (release.send === "nothing") {
    answerServer(interceptor, answers, pipeline, flow, judged, release.reason);
    const errors = answersOf(judged).map((a) => droppedError(a.id!, release.reason));
    return Buffer.from(errors.length === 0 ? "" : JSON.stringify(batch ? errors : errors[0]));
  }
  for (const j of judged) if (j.event.answered) pipeline.tracker.correlator.add(j.event.answered);
  const bytes = Buffer.from(JSON.stringify(release.message) ?? "null");
  const rejudged = await judgeEdited(bytes);
  if (!rejudged.some(isEnforcedDeny)) return bytes;
  const replaced = rejudged.map((j) => (isEnforcedDeny(j) ? replacementForServerMessage(j, removeDeniedTools) : j.event.raw)).filter((m) => m !== null);
  return Buffer.from(replaced.length === 0 ? "" : JSON.stringify(Array.isArray(release.message) ? replaced : replaced[0]));
}

/** The MCP addon's `--intercept` hooks for HTTP bodies, holding through `interceptor`. */
export function interceptHooks(interceptor: Interceptor, removeDeniedTools: boolean, answers: ServerAnswers | null = null): InterceptHooks {
  return {
    ended: (flow) => interceptor.queue.dropFlow(flow, "its exchange ended before it was released (the client went away?)"),
    event: (pipeline, flow, judged, out, judgeEdited) => interceptedEvent(interceptor, pipeline, flow, judged, out, judgeEdited, removeDeniedTools, answers),
    request: (pipeline, flow, limits, inner, judgeEdited) => interceptedRequestHold(interceptor, pipeline, flow, limits, inner, judgeEdited),
    response: (pipeline, flow, judged, out, judgeEdited) => interceptedResponse(interceptor, pipeline, flow, judged, out, judgeEdited, removeDeniedTools, answers),
  };
}

/**
 * `--intercept` on one judged event of an event stream: `out` is what would go out for it (the event as received,
 * or enforce mode's replacement). Selected: a promise of what goes out instead, and the events after it wait for
 * it (the stream is not read meanwhile). Dropped: each answer in it reaches its client as error -32054, in an
 * event of its own. Edited: judged and recorded as the answer the original was, then sent as one event.
 */
export function interceptedEvent(
  interceptor: Interceptor,
  pipeline: MessageHandler,
  flow: McpFlow,
  judged: readonly Judged[],
  out: Buffer,
  judgeEdited: (body: Buffer) => Promise<Judged[]>,
  removeDeniedTools: boolean,
  serverAnswers: ServerAnswers | null = null,
): Buffer | Promise<Buffer> {
  if (!interceptor.matches(judged)) return out;
  return (async () => {
    const batch = judged.some((j) => j.event.batch !== undefined);
    const messages = judged.filter((j) => j.event.raw !== undefined).map((j) => j.event.raw);
    const id = judged[0]?.event.sseEventId;
    const release = await interceptor.hold({ ...heldPlace(flow), peer: peerKey(flow.ex, "server_to_client") }, judged, batch ? messages : messages[0]);
    if (release.send === "original") return out;
    if (release.send === "nothing") {
      answerServer(interceptor, serverAnswers, pipeline, flow, judged, release.reason);
      return Buffer.concat(answersOf(judged).map((a) => sseEvent(droppedError(a.id!, release.reason))));
    }
    for (const j of judged) if (j.event.answered) pipeline.tracker.correlator.add(j.event.answered);
    const rejudged = await judgeEdited(Buffer.from(JSON.stringify(release.message) ?? "null"));
    if (!rejudged.some(isEnforcedDeny)) return sseEvent(release.message, id);
    const replaced = rejudged.map((j) => (isEnforcedDeny(j) ? replacementForServerMessage(j, removeDeniedTools) : j.event.raw)).filter((m) => m !== null);
    if (replaced.length === 0) return DROPPED_EVENT;
    return sseEvent(Array.isArray(release.message) ? replaced : replaced[0], id);
  })();
}

/**
 * A server's requests among dropped messages: each is answered with error -32054, POSTed by the proxy as the
 * client would (not awaited: the stream goes on meanwhile). Without `answers` (no upstream to reach) they wait.
 */
function answerServer(interceptor: Interceptor, answers: ServerAnswers | null, pipeline: MessageHandler, flow: McpFlow, judged: readonly Judged[], reason: string): void {
  if (!answers) return;
  for (const r of requestsOf(judged)) {
    if (r.direction !== "server_to_client") continue;
    const one = judged.filter((j) => j.event === r);
    void answers.send(pipeline, flow, droppedError(r.id!, reason), (why) => interceptor.answerFailed({ ...heldPlace(flow), peer: peerKey(flow.ex, "server_to_client") }, one, why));
  }
}

function heldPlace(flow: McpFlow): Omit<HeldPlace, "peer"> {
  return { flow: flow.ex.id, server: flow.server, session: flow.session, transport: flow.transport };
}
