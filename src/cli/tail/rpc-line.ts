import { printable, type Paint, type Style } from "../../saved-logs/color.js";
import { num, obj, ruleNames, str, type LogRecord } from "../../saved-logs/filters.js";
import { isToolError } from "../../analysis/calls.js";
import { bytes, clip, duration, KIND_WIDTH, pad, row, shortSession } from "../../saved-logs/layout.js";

/** How the KIND column names and paints a message kind (notifications aside). */
const KIND_LOOK: ReadonlyMap<string, readonly [label: string, style: Style | Style[] | null]> = new Map([
  ["request", ["request", "bold"]],
  ["response", ["response", null]],
  ["error", ["error", "red"]],
  ["invalid", ["INVALID", ["magenta", "bold"]]],
  ["unanswered", ["UNANSWERED", ["red", "bold"]]],
]);

/** The line of an `rpc` record; `branch` is its mark under the request printed just before ("" for none). */
export function rpcLine(p: Paint, r: LogRecord, branch: string): string {
  const kind = str(r.kind) ?? "?";
  const arrow = r.direction === "client_to_server" ? p("green", "→") : p("blue", "←");
  const method = str(r.method);
  const rel = obj(r.related);
  const progress = method === "notifications/progress";
  const cancel = method === "notifications/cancelled";

  const [label, style] = kind === "notification" ? notificationLook(progress, cancel) : (KIND_LOOK.get(kind) ?? [kind, null]);
  const padded = pad(label, KIND_WIDTH - branch.length);
  const kindCell = p("gray", branch) + (style ? p(style, padded) : padded);

  const idValue = progress || cancel ? rel?.id : r.id;
  const id = idValue === undefined || (idValue === null && kind !== "error" && kind !== "invalid") ? "" : `#${idText(idValue)}`;
  const latencyMs = num(r.latencyMs) ?? (progress || cancel ? num(rel?.elapsedMs) : null);
  const latency = latencyMs === null ? "" : duration(latencyMs);
  const size = kind === "unanswered" ? "" : bytes(num(r.bytes));

  const parts: string[] = [];
  const call = [method, str(r.tool)].filter((x): x is string => x !== null).join(" ");
  const params = obj(r.params);
  if (progress) {
    const done = num(params?.progress);
    const total = num(params?.total);
    parts.push(p("cyan", `⋯ ${done ?? "?"}${total !== null ? `/${total}` : ""}`));
    if (rel) parts.push(printable(relatedCall(rel)));
    const message = str(params?.message);
    if (message) parts.push(p("dim", printable(clip(message, 80))));
  } else if (cancel) {
    parts.push(printable(call));
    if (rel) parts.push(p("dim", printable(`of ${relatedCall(rel)}`)));
    const reason = str(params?.reason);
    if (reason) parts.push(p("dim", printable(`“${clip(reason, 80)}”`)));
  } else {
    if (call) parts.push(kind === "request" ? p("bold", printable(call)) : printable(call));
  }
  if (kind === "error") {
    const error = obj(r.error);
    const code = num(error?.code);
    const message = str(error?.message);
    if (code !== null || message) parts.push(p("red", printable([code, message && clip(message, 120)].filter((x) => x !== null && x !== "").join(" "))));
  }
  // Counted as errors by `check` and `stats`: shown as such.
  if (kind === "response" && isToolError(r)) parts.push(p("red", "✗ isError"));
  const reason = str(r.reason);
  if (reason) parts.push(p(kind === "invalid" ? "magenta" : kind === "unanswered" ? "red" : "yellow", printable(`— ${clip(reason, 160)}`)));
  const batch = obj(r.batch);
  if (batch) parts.push(p("dim", `[batch ${(num(batch.index) ?? 0) + 1}/${num(batch.size) ?? "?"}]`));
  if (Array.isArray(r.headerMismatch)) parts.push(p("yellow", "⚠ header mismatch"));
  const round = num(r.round);
  if (kind === "request" && round !== null && round > 1) parts.push(p("cyan", `⟳ round ${round}`));
  if (r.resultType === "input_required") parts.push(p("cyan", "⟳ input required"));
  if (typeof r.roundProblem === "string") parts.push(p("yellow", printable(`⚠ ${clip(r.roundProblem, 120)}`)));
  const task = obj(r.task);
  if (task) parts.push(...taskParts(p, task));
  if (r.insecureUpstream === true) parts.push(p("yellow", "⚠ insecure upstream"));
  if (typeof r.replayOf === "string") parts.push(p("cyan", "↻ replay"));
  const badge = decisionBadge(p, obj(r.decision));
  if (badge) parts.push(badge);

  return row(p, str(r.time), shortSession(str(r.session)), arrow, kindCell, id, latency, size, parts.join("  "));
}

/** `FLAG rule`, `DENY rule` (logged only) or `DENY* rule (effect)` (enforced); "" for other decisions. */
export function decisionBadge(p: Paint, decision: LogRecord | undefined): string {
  if (!decision) return "";
  const action = str(decision.action);
  if (action !== "flag" && action !== "deny") return "";
  const rules = ruleNames(decision);
  const names = rules.length > 0 ? ` ${printable(clip(rules.join(","), 80))}` : "";
  if (action === "flag") return p(["yellow", "bold"], `FLAG${names}`);
  const enforced = decision.enforced === true;
  const effect = str(decision.effect);
  const text = `${enforced ? "DENY*" : "DENY"}${names}`;
  return (enforced ? p(["inverseRed", "bold"], text) : p(["red", "bold"], text)) + (effect ? p("red", printable(` (${clip(effect, 80)})`)) : "");
}

/** Where a task stands on this message: created, its status, its end (with the call's latency), its result. */
function taskParts(p: Paint, task: LogRecord): string[] {
  const end = obj(task.end);
  const endLatency = num(end?.callLatencyMs);
  const status = str(end?.status) ?? str(task.status);
  const what = end ? `task ${status ?? "ended"}${endLatency !== null ? ` after ${duration(endLatency)}` : ""}` : task.created === true ? `task created${status ? ` (${status})` : ""}` : `task ${status ?? ""}`.trimEnd();
  const out = [p("cyan", printable(`⧗ ${what}${task.final === true ? ", result" : ""}`))];
  const problem = str(task.problem);
  if (problem) out.push(p("yellow", printable(`⚠ ${clip(problem, 120)}`)));
  return out;
}

function notificationLook(progress: boolean, cancel: boolean): readonly [string, Style | null] {
  return progress ? ["progress", "dim"] : cancel ? ["cancel", "yellow"] : ["notify", null];
}

/** The method and tool of the request a progress or cancel notification is about. */
function relatedCall(rel: LogRecord): string {
  return [str(rel.method), str(rel.tool)].filter(Boolean).join(" ");
}

function idText(id: unknown): string {
  const text = typeof id === "string" ? id : JSON.stringify(id) ?? "?";
  return printable(clip(text, 9));
}
