import type http from "node:http";
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
 * Enforce mode: the request body is read (up to `hold.maxBytes`) before anything is sent upstream, and the
 * hold's verdict decides what happens; a `decide` that throws or rejects fails closed: the client gets a 500
 * and the body never goes upstream unjudged. Nothing is done once the client has gone.
 */
export function holdRequest(req: http.IncomingMessage, res: http.ServerResponse, hold: RequestHold, outcome: HeldRequestOutcome): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const apply = (verdict: RequestVerdict, rest: "piped" | "done"): void => {
    if (res.destroyed) return;
    if (verdict.action === "respond") {
      outcome.respond(verdict.response);
      req.resume();
      return;
    }
    outcome.forward(verdict.body ?? (rest === "done" ? Buffer.concat(chunks) : null), chunks);
  };
  const decide = (body: Buffer | null, rest: "piped" | "done"): void => {
    void Promise.resolve()
      .then(() => hold.decide(body))
      .then(
        (v) => apply(v, rest),
        () => apply(UNJUDGED, rest),
      );
  };
  const collect = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.length;
    if (size <= hold.maxBytes) return;
    req.off("data", collect);
    req.off("end", onEnd);
    req.pause();
    decide(null, "piped");
  };
  const onEnd = (): void => decide(Buffer.concat(chunks), "done");
  req.on("data", collect);
  req.on("end", onEnd);
  // The engine hands the request over paused.
  req.resume();
}

const UNJUDGED: RequestVerdict = {
  action: "respond",
  response: { status: 500, headers: { "content-type": "text/plain; charset=utf-8" }, body: Buffer.from("mcp-wiretap: the request could not be judged (internal error); not forwarded\n") },
};
