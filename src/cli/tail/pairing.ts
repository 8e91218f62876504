import { obj, str, type LogRecord } from "./filters.js";

/**
 * Which rpc lines are drawn as branches (`├`, `└`) under the request printed just before: its answer
 * (response, error, unanswered mark) closes the branch, its progress and cancellation do not. Anything
 * else printed in between breaks the pairing.
 */
export class BranchPairing {
  private open: LogRecord | null = null;

  /** The branch mark for an rpc record ("" when it is not one), remembering a request for what follows. */
  branchOf(r: LogRecord): string {
    const kind = str(r.kind) ?? "?";
    const method = str(r.method);
    const rel = obj(r.related);
    const aside = method === "notifications/progress" || method === "notifications/cancelled";
    const answers = kind === "response" || kind === "error" || kind === "unanswered";
    if (this.open && ((answers && sameRequest(this.open, r, r.id)) || (aside && rel && sameRequest(this.open, r, rel.id)))) {
      if (answers) this.open = null;
      return answers ? "└ " : "├ ";
    }
    this.open = kind === "request" ? r : null;
    return "";
  }

  /** A line other than an rpc record was printed. */
  interrupt(): void {
    this.open = null;
  }
}

/** Same request: equal ids, and the same exchange or the same (named) session. */
function sameRequest(request: LogRecord, other: LogRecord, id: unknown): boolean {
  if (JSON.stringify(request.id) !== JSON.stringify(id) || id === undefined) return false;
  if (request.server !== other.server) return false;
  if (request.flow === other.flow) return true;
  return typeof other.session === "string" && other.session === request.session;
}
