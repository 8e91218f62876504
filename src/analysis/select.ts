import { compileFilters, type LogRecord, type RecordFilters } from "../saved-logs/filters.js";
import { buildCalls, type Call } from "./calls.js";

/** The calls of a log that `filters` select: those with at least one record the filters match. */
export function selectCalls(records: readonly LogRecord[], filters: RecordFilters): Call[] {
  const matches = compileFilters(filters);
  return buildCalls(records).filter((call) => call.records.some(matches));
}
