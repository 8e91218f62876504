import type { LogRecord } from "./filters.js";
/** A JSON object on one line, or null (anything else is passed through as text). */
export function parseRecord(line: string): LogRecord | null {
  const start = line.trimStart();
  if (!start.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as LogRecord) : null;
  } catch {
    return null;
  }
}
