import type { Charge } from "../budget/inspect-budget.js";
import { answerClient } from "../mcp/enforce.js";
import type { McpFlow } from "../mcp/flow.js";
import { droppedError, isEnforcedDeny, policyError } from "../mcp/replies.js";
import type { Judged, RpcEvent } from "../mcp/rpc-event.js";
import type { MessageHandler } from "../mcp/tracker.js";
import type { RequestHold, RequestVerdict } from "../proxy/exchange.js";
import type { Interceptor } from "./interceptor.js";

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
      const release = await interceptor.hold({ flow: flow.ex.id, server: flow.server, session: flow.session, transport: flow.transport }, judged, message);
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

function requestsOf(judged: readonly Judged[]): RpcEvent[] {
  return judged.map((j) => j.event).filter((e) => e.kind === "request" && e.id !== null && e.id !== undefined);
}
