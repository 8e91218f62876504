import { printable } from "../saved-logs/color.js";
import type { Finding } from "./conditions.js";

/** A finding as one line: condition, time, session, id, method and tool, then why. */
export function findingLine(f: Finding): string {
  const where = [
    f.time ?? "-",
    f.server !== null ? `server ${f.server}` : null,
    f.session !== null ? `session ${f.session}` : null,
    f.id !== null && f.id !== undefined ? `id ${JSON.stringify(f.id)}` : null,
    [f.method, f.tool].filter((x) => x !== null).join(" ") || null,
  ].filter((x): x is string => x !== null);
  return printable(`${f.condition.padEnd(10)} ${where.join("  ")}: ${f.reason}`);
}

/** The text report: every finding, then a summary line. */
export function checkText(findings: readonly Finding[], checked: readonly string[], records: number): string {
  if (findings.length === 0) return `ok: none of ${checked.join(", ")} in ${records} records\n`;
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.condition, (counts.get(f.condition) ?? 0) + 1);
  const summary = [...counts].map(([c, n]) => `${c} ${n}`).join(", ");
  return `${findings.map(findingLine).join("\n")}\nFAILED: ${findings.length} finding(s): ${summary} (checked: ${checked.join(", ")}; ${records} records)\n`;
}
