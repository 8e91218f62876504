import { printable, type Paint } from "./color.js";
import { legacySessionId } from "./filters.js";

/** Width of the KIND column (a branch mark included). */
export const KIND_WIDTH = 12;

/** One line in the fixed columns: TIME SESSION DIR KIND ID LATENCY SIZE, then free text. */
export function row(p: Paint, time: string | null, session: string, arrow: string, kindCell: string, id: string, latency: string, size: string, text: string): string {
  const left = `${timeCell(p, time)} ${pad(session, 8)} ${arrow} ${kindCell} ${pad(id, 10)} ${latency.padStart(6)} ${size.padStart(6)}`;
  return text ? `${left}  ${text}` : left.trimEnd();
}

/** A line with only TIME and SESSION columns, then free text (session and proxy notices). */
export function noticeRow(p: Paint, time: string | null, session: string, text: string): string {
  return `${timeCell(p, time)} ${pad(session, 8)} ${text}`;
}

export function timeCell(p: Paint, iso: string | null): string {
  return p("gray", clockTime(iso));
}

/** HH:MM:SS.mmm in UTC from an ISO time (pino's `time`); anything else as it is, padded. */
export function clockTime(iso: string | null): string {
  if (iso === null) return pad("-", 12);
  const m = /^\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)(\.\d{1,9})?Z$/.exec(iso);
  if (m) return `${m[1]}${((m[2] ?? ".") + "000").slice(0, 4)}`;
  const t = Date.parse(iso);
  if (!Number.isNaN(t)) return new Date(t).toISOString().slice(11, 23);
  return pad(printable(iso.slice(0, 12)), 12);
}

/** First 8 characters of a session id (of a legacy endpoint, of its sessionId value), or "-". */
export function shortSession(session: string | null): string {
  if (session === null || session === "") return "-";
  const legacy = legacySessionId(session);
  return printable((legacy ?? session.replace(/^\/+/, "")).slice(0, 8));
}

/** 812B, 1.2kB, 34kB, 5.6MB (SI: 1 kB = 1000 bytes). */
export function bytes(n: number | null): string {
  if (n === null) return "";
  if (n < 1000) return `${n}B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = n / 1000;
  let unit = 0;
  while (value >= 999.5 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 9.95 ? value.toFixed(1) : Math.round(value)}${units[unit]}`;
}

/** 12ms, 1.3s, 42s, 3m05s. */
export function duration(ms: number | null): string {
  if (ms === null) return "";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 9950) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 59_500) return `${Math.round(ms / 1000)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

export function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
