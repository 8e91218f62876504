import { compileFilters } from "../../saved-logs/filters.js";
import { parseQuery } from "../../saved-logs/filter-query.js";
import type { GroupStatus, Msg } from "./model.js";

export { parseQuery, type ParsedQuery } from "../../saved-logs/filter-query.js";

/** The status a message shows: its request exchange's (a request never answered counts as pending). */
export function statusOf(m: Msg): GroupStatus | null {
  if (m.group) return m.group.status === "unanswered" ? "pending" : m.group.status;
  const kind = m.record.kind;
  if (kind === "error" || kind === "invalid") return "error";
  return null;
}

export function compileQuery(input: string): { test: (m: Msg) => boolean; problems: string[] } {
  const q = parseQuery(input);
  const tail = compileFilters(q.filters);
  const texts = q.text.map((t) => new RegExp(t.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&"), "i"));
  const dirs = new Set(q.dir);
  const statuses = new Set(q.status);
  return {
    problems: q.problems,
    test: (m) =>
      tail(m.record) &&
      (dirs.size === 0 || dirs.has(m.record.direction as string)) &&
      (statuses.size === 0 || statuses.has(statusOf(m) ?? "")) &&
      texts.every((re) => re.test(m.line)),
  };
}
