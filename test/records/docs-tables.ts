/** What docs/log-format.md says about each record type: the fields of its tables, its levels. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "../helpers/proxy-harness.js";

const DOC = readFileSync(path.join(REPO_ROOT, "docs", "log-format.md"), "utf8");

/** The text under a heading, up to the next heading of that level or above; undefined without the heading. */
function section(heading: string): string | undefined {
  const start = DOC.indexOf(`\n${heading}\n`);
  if (start === -1) return undefined;
  const level = heading.split(" ")[0]!;
  const rest = DOC.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  return end === -1 ? rest : rest.slice(0, end);
}

/** Field names of each `| Field | …` table under a heading (the names in backticks of its first column). */
export function documentedTables(heading: string): Set<string>[] | undefined {
  const text = section(heading);
  if (text === undefined) return undefined;
  const tables: Set<string>[] = [];
  let current: Set<string> | null = null;
  for (const line of text.split("\n")) {
    if (!line.startsWith("|")) {
      current = null;
      continue;
    }
    if (/^\|\s*Field\s*\|/.test(line)) {
      current = new Set();
      tables.push(current);
      continue;
    }
    if (!current) continue;
    const first = line.split("|")[1] ?? "";
    for (const m of first.matchAll(/`([A-Za-z_]+)`/g)) current.add(m[1]!);
  }
  return tables;
}

/** All the fields the tables under a heading name. */
export function documentedFields(heading: string): Set<string> | undefined {
  const tables = documentedTables(heading);
  return tables && new Set(tables.flatMap((t) => [...t]));
}

/** The levels the table of record types gives each type (`info / warn` → both). */
export function documentedLevels(): Map<string, string[]> {
  const levels = new Map<string, string[]>();
  for (const m of DOC.matchAll(/^\| \[`([a-z_]+)`\]\(#[a-z_]+\) \| ([a-z /]+) \|/gm)) levels.set(m[1]!, m[2]!.split("/").map((l) => l.trim()));
  return levels;
}
