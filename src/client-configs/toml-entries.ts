/** The server entries of Codex's TOML config: each `[mcp_servers.NAME]` table with its keys. */
import type { FoundEntries } from "./json-entries.js";
import { classify, type ServerEntry, type TextEdit } from "./server-entry.js";
import { readTomlValue, scanToml, tomlString, type TomlStatement } from "./toml-scan.js";

type Kv = TomlStatement & { kind: "kv" };

/** Throws TomlError when the text is not TOML this reader understands. */
export function findTomlEntries(text: string, tables: string[][]): FoundEntries {
  const statements = scanToml(text);
  const found: FoundEntries = { entries: [], notes: [] };
  for (const [top] of tables) {
    const headers = new Map<string, number>();
    const elsewhere = new Set<string>();
    statements.forEach((s, i) => {
      const full = s.kind === "table" ? s.path : [...s.table, ...s.key];
      if (full[0] !== top || full.length < 2) {
        if (s.kind === "table" && s.array && s.path.length === 1 && s.path[0] === top) found.notes.push(`[[${top}]] is a list, not a table of servers: left alone`);
        return;
      }
      const name = full[1]!;
      if (s.kind === "table" && s.path.length === 2 && !s.array && !headers.has(name)) headers.set(name, i);
      else if (s.kind === "kv" && s.table.length < 2) elsewhere.add(name); // `mcp_servers.NAME.x = …` or `NAME = { … }`
    });
    for (const name of elsewhere) if (!headers.has(name)) found.notes.push(`server "${name}" is written as dotted keys or an inline table, not as [${top}.${name}]: left alone`);
    for (const [name, i] of headers) found.entries.push(entryOf(text, statements, i, top!, name, elsewhere.has(name)));
  }
  return found;
}

function entryOf(text: string, statements: TomlStatement[], headerIndex: number, top: string, name: string, mixed: boolean): ServerEntry {
  const header = statements[headerIndex]!;
  const kvs: Kv[] = [];
  for (let i = headerIndex + 1; i < statements.length && statements[i]!.kind === "kv"; i++) kvs.push(statements[i] as Kv);
  const base = { name, where: [top, name], start: header.start, end: kvs.at(-1)?.end ?? header.end };
  const none = (): TextEdit[] => [];
  if (mixed) return { ...base, kind: "unknown", note: "also has keys outside its table", launch: none };
  const kvOf = (key: string): Kv | undefined => kvs.find((kv) => kv.key.length === 1 && kv.key[0] === key);
  const field = (key: string): unknown => {
    const kv = kvOf(key);
    if (!kv) return undefined;
    const value = readTomlValue(text.slice(kv.valueStart, kv.valueEnd));
    return value.kind === "other" ? { toml: text.slice(kv.valueStart, kv.valueEnd) } : value.value;
  };
  const { kind, note } = classify({ command: field("command"), args: field("args"), url: field("url") });
  const command = kind === "stdio" || kind === "wrapped" || kind === "bridged" ? (field("command") as string) : undefined;
  const args = command === undefined ? undefined : ((field("args") as string[] | undefined) ?? []);
  const disabled = (field("enabled") as { toml?: string } | undefined)?.toml === "false";
  return { ...base, kind, note, command, args, disabled, launch: (c, a) => launchEdits(text, kvOf("command")!, kvOf("args"), c, a) };
}

function launchEdits(text: string, commandKv: Kv, argsKv: Kv | undefined, command: string, args: string[]): TextEdit[] {
  const edits: TextEdit[] = [{ start: commandKv.valueStart, end: commandKv.valueEnd, text: tomlString(command) }];
  if (argsKv) edits.push({ start: argsKv.valueStart, end: argsKv.valueEnd, text: arrayText(text, argsKv, args) });
  else {
    const indent = /^[ \t]*/.exec(text.slice(commandKv.start))![0];
    const newline = text.slice(commandKv.start, commandKv.end).endsWith("\r\n") ? "\r\n" : "\n";
    const line = `${indent}args = ${arrayText(text, undefined, args)}`;
    edits.push({ start: commandKv.end, end: commandKv.end, text: text.slice(0, commandKv.end).endsWith("\n") ? line + newline : newline + line });
  }
  return edits;
}

function arrayText(text: string, old: Kv | undefined, items: string[]): string {
  const oldText = old ? text.slice(old.valueStart, old.valueEnd) : "";
  const firstItem = /\[[ \t]*\r?\n([ \t]*)\S/.exec(oldText);
  if (!firstItem || items.length === 0) return `[${items.map(tomlString).join(", ")}]`;
  const newline = oldText.includes("\r\n") ? "\r\n" : "\n";
  const closeIndent = /([ \t]*)\]$/.exec(oldText)?.[1] ?? "";
  return `[${newline}${items.map((i) => firstItem[1] + tomlString(i)).join("," + newline)}${newline}${closeIndent}]`;
}
