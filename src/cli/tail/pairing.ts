import { obj, str, type LogRecord } from "../../saved-logs/filters.js";

/**
 * Which rpc lines are drawn as branches (`├`, `└`) under the request printed just before: its answer
 * (response, error, unanswered mark) closes the branch, its progress and cancellation do not. An
 * `input_required` answer does not close it either: the retry that follows (same `call`) and its answer
 * hang in the same tree, round after round. Anything else printed in between breaks the pairing.
 */
export class BranchPairing {
  private open: LogRecord | null = null;
  /** A multi-round call whose `input_required` answer was just drawn: its retry continues the tree. */
  private awaiting: string | null = null;

  /** The branch mark for an rpc record ("" when it is not one), remembering a request for what follows. */
  branchOf(r: LogRecord): string {
    const kind = str(r.kind) ?? "?";
    const method = str(r.method);
    const rel = obj(r.related);
    const aside = method === "notifications/progress" || method === "notifications/cancelled";
    const answers = kind === "response" || kind === "error" || kind === "unanswered";
    if (kind === "request" && this.awaiting !== null && r.call === this.awaiting) {
      this.open = r;
      this.awaiting = null;
      return "├ ";
    }
    if (this.open && ((answers && sameRequest(this.open, r, r.id)) || (aside && rel && sameRequest(this.open, r, rel.id)))) {
      if (!answers) return "├ ";
      this.open = null;
      if (r.resultType === "input_required" && typeof r.call === "string") {
        this.awaiting = r.call;
        return "├ ";
      }
      return "└ ";
    }
    this.open = kind === "request" ? r : null;
    this.awaiting = null;
    return "";
  }

  /** A line other than an rpc record was printed. */
  interrupt(): void {
    this.open = null;
    this.awaiting = null;
  }
}

/** Same request: equal ids, and the same exchange or the same (named) session. */
function sameRequest(request: LogRecord, other: LogRecord, id: unknown): boolean {
  if (JSON.stringify(request.id) !== JSON.stringify(id) || id === undefined) return false;
  if (request.server !== other.server) return false;
  if (request.flow === other.flow) return true;
  return typeof other.session === "string" && other.session === request.session;
}
