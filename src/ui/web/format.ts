import { num, obj, str, type LogRecord } from "../../saved-logs/filters.js";
import { clockText } from "./time.js";

/** A record's time of day (local or UTC, as chosen), to the millisecond. */
export const timeOf = (r: LogRecord): string => {
  const t = str(r.time);
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? (t ?? "") : clockText(ms);
};

/** `1 call`, `2 calls`; `plural` for the irregular ones (`1 entry`, `3 entries`). */
export function counted(n: number, one: string, plural = `${one}s`): string {
  return `${n} ${n === 1 ? one : plural}`;
}

export const arrow = (r: LogRecord): string => (r.direction === "client_to_server" ? "→" : r.direction === "server_to_client" ? "←" : "·");

export const idText = (id: unknown): string => (id === undefined || id === null ? "" : typeof id === "string" ? id : JSON.stringify(id));

export function bytesText(n: number | null): string {
  if (n === null) return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function msText(n: number | null): string {
  return n === null ? "" : `${n} ms`;
}

export const decisionOf = (r: LogRecord): { action: string; enforced: boolean } => {
  const d = obj(r.decision);
  return { action: str(d?.action) ?? "", enforced: d?.enforced === true };
};

export const bytesOf = (r: LogRecord): number | null => num(r.bytes);
