/**
 * Times as the page shows them: in the browser's zone or in UTC, as the person chose (the toggle in the
 * header); the choice is kept in localStorage. Every text of a time goes through here.
 */
const KEY = "mcp-wiretap.time-zone";

function stored(): boolean {
  try {
    return localStorage.getItem(KEY) === "utc";
  } catch {
    return false; // storage refused (a file:// page in some browsers): local time
  }
}

let utc = stored();

export const showsUtc = (): boolean => utc;

export function setUtc(on: boolean): void {
  utc = on;
  try {
    localStorage.setItem(KEY, on ? "utc" : "local");
  } catch {
    // not kept: the choice holds for this page only
  }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

function parts(ms: number): { y: number; mo: number; d: number; h: number; mi: number; s: number; milli: number } {
  const t = new Date(ms);
  return utc
    ? { y: t.getUTCFullYear(), mo: t.getUTCMonth() + 1, d: t.getUTCDate(), h: t.getUTCHours(), mi: t.getUTCMinutes(), s: t.getUTCSeconds(), milli: t.getUTCMilliseconds() }
    : { y: t.getFullYear(), mo: t.getMonth() + 1, d: t.getDate(), h: t.getHours(), mi: t.getMinutes(), s: t.getSeconds(), milli: t.getMilliseconds() };
}

/** `14:03:07.123` (`withMs` false: `14:03:07`). */
export function clockText(ms: number, withMs = true): string {
  const p = parts(ms);
  return `${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}${withMs ? `.${pad(p.milli, 3)}` : ""}`;
}

/** `2026-11-28`. */
export function dateText(ms: number): string {
  const p = parts(ms);
  return `${p.y}-${pad(p.mo)}-${pad(p.d)}`;
}

/** The zone times are shown in: `UTC`, or the local offset (`UTC+01:00`). */
export function zoneText(at = Date.now()): string {
  if (utc) return "UTC";
  const off = -new Date(at).getTimezoneOffset();
  return off === 0 ? "UTC+00:00" : `UTC${off > 0 ? "+" : "-"}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

/** An ISO time as `2026-11-28 14:03:07` (or "" when it is none). */
export function dateTimeText(iso: string | null): string {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? (iso ?? "") : `${dateText(ms)} ${clockText(ms, false)}`;
}
