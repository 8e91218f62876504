import type http from "node:http";
import type { Readable } from "node:stream";
import { GrowingBuffer } from "../budget/growing-buffer.js";
import type { RequestHold, RequestVerdict, SyntheticResponse } from "./exchange.js";

export interface HeldRequestOutcome {
  /** The policy answers the client itself; nothing goes upstream. */
  respond(response: SyntheticResponse): void;
  /**
   * The request goes upstream. `whole`: the complete body to send (the one read, or the verdict's own); null
   * when the body outgrew the hold: `held` is sent first, then the rest is piped as it comes.
   */
  forward(whole: Buffer | null, held: readonly Buffer[]): void;
}

/**
 * Enforce mode: the request body is read (up to `hold.maxBytes`, into one growing buffer charged to
 * `hold.charge`) before anything is sent upstream, and the hold's verdict decides what happens; a `decide`
 * that throws or rejects fails closed: the client gets a 500 and the body never goes upstream unjudged.
 * Nothing is done once the client has gone.
 */
export function holdRequest(req: Readable, res: http.ServerResponse, hold: RequestHold, outcome: HeldRequestOutcome): void {
  const kept = new GrowingBuffer(hold.charge, hold.maxBytes + 1);
  const apply = (verdict: RequestVerdict, rest: "piped" | "done"): void => {
    if (res.destroyed) return kept.clear();
    if (verdict.action === "respond") {
      kept.clear();
      outcome.respond(verdict.response);
      req.resume();
      return;
    }
    const held = kept.view();
    kept.clear();
    outcome.forward(verdict.body ?? (rest === "done" ? held : null), unkept ? [held, unkept] : [held]);
  };
  const decide = (body: Buffer | null, rest: "piped" | "done", why?: "too_large" | "over_budget"): void => {
    void Promise.resolve()
      .then(() => hold.decide(body, why))
      .then(
        (v) => apply(v, rest),
        () => apply(UNJUDGED, rest),
      );
  };
  const stop = (why: "too_large" | "over_budget"): void => {
    req.off("data", collect);
    req.off("end", onEnd);
    req.pause();
    decide(null, "piped", why);
  };
  /** The chunk the budget found no room for: forwarded after what was kept, should the verdict let the body pass. */
  let unkept: Buffer | null = null;
  const collect = (chunk: Buffer): void => {
    if (!kept.append(chunk)) {
      unkept = chunk;
      return stop("over_budget");
    }
    if (kept.length > hold.maxBytes) stop("too_large");
  };
  const onEnd = (): void => decide(kept.view(), "done");
  req.on("data", collect);
  req.on("end", onEnd);
  // A client gone mid-body leaves nothing held (nor charged).
  res.once("close", () => kept.clear());
  // The engine hands the request over paused.
  req.resume();
}

const UNJUDGED: RequestVerdict = {
  action: "respond",
  response: { status: 500, headers: { "content-type": "text/plain; charset=utf-8" }, body: Buffer.from("mcp-wiretap: the request could not be judged (internal error); not forwarded\n") },
};
