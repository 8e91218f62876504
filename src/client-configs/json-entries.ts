/** The server entries of a JSON (or JSONC) client config, found in the tree that keeps their place in the text. */
import { type JsonNode, parseJsonc, plainValue, propOf } from "./jsonc-tree.js";
import { classify, type ServerEntry, type TextEdit } from "./server-entry.js";

export interface FoundEntries {
  entries: ServerEntry[];
  /** Tables or entries left alone, and why. */
  notes: string[];
}

/** Throws JsoncError when the text is not JSON with comments. */
export function findJsonEntries(text: string, tables: string[][]): FoundEntries {
  const root = parseJsonc(text);
  const found: FoundEntries = { entries: [], notes: [] };
  for (const pattern of tables) for (const { node, where } of walk(root, pattern, [], found.notes)) collect(text, node, where, found);
  return found;
}

function walk(node: JsonNode, pattern: string[], where: string[], notes: string[]): Array<{ node: JsonNode; where: string[] }> {
  if (pattern.length === 0) return [{ node, where }];
  if (node.kind !== "object") return [];
  const [head, ...rest] = pattern;
  if (head === "*") return node.props.flatMap((prop) => walk(prop.value, rest, [...where, prop.key], notes));
  const prop = propOf(node, head!);
  if (prop === "duplicate") {
    notes.push(`"${[...where, head].join(".")}" appears twice: which one the client reads is unclear, so it is left alone`);
    return [];
  }
  return prop ? walk(prop.value, rest, [...where, head!], notes) : [];
}

function collect(text: string, table: JsonNode, where: string[], found: FoundEntries): void {
  if (table.kind !== "object") {
    found.notes.push(`"${where.join(".")}" is not an object: left alone`);
    return;
  }
  const names = table.props.map((p) => p.key);
  table.props.forEach((prop, i) => {
    const entryWhere = [...where, prop.key];
    if (names.indexOf(prop.key) !== names.lastIndexOf(prop.key)) {
      if (names.indexOf(prop.key) === i) found.notes.push(`server "${prop.key}" appears twice in "${where.join(".")}": left alone`);
      return;
    }
    found.entries.push(entryOf(text, prop.key, entryWhere, prop.value));
  });
}

function entryOf(text: string, name: string, where: string[], node: JsonNode): ServerEntry {
  const base = { name, where, start: node.start, end: node.end };
  const none = (): TextEdit[] => [];
  if (node.kind !== "object") return { ...base, kind: "unknown", note: "not an object", launch: none };
  const duplicate = node.props.find((p, i) => node.props.findIndex((q) => q.key === p.key) !== i);
  if (duplicate) return { ...base, kind: "unknown", note: `"${duplicate.key}" appears twice`, launch: none };
  const field = (key: string): unknown => {
    const prop = propOf(node, key);
    return prop && prop !== "duplicate" ? plainValue(prop.value) : undefined;
  };
  // Claude Code, Cursor and Gemini use `url` (Gemini `httpUrl` too), Windsurf `serverUrl`.
  const url = field("url") ?? field("serverUrl") ?? field("httpUrl");
  const { kind, note } = classify({ command: field("command"), args: field("args"), url, type: field("type") });
  const disabled = field("disabled") === true || field("enabled") === false;
  const command = kind === "stdio" || kind === "wrapped" ? (field("command") as string) : undefined;
  const args = command === undefined ? undefined : ((field("args") as string[] | undefined) ?? []);
  return { ...base, kind, note, command, args, disabled, launch: (c, a) => launchEdits(text, node, c, a) };
}

/** Replaces the command's value and the args' value (or adds args after the command), nothing else. */
function launchEdits(text: string, entry: JsonNode & { kind: "object" }, command: string, args: string[]): TextEdit[] {
  const commandNode = entry.props.find((p) => p.key === "command")!.value;
  const argsNode = entry.props.find((p) => p.key === "args")?.value;
  const edits: TextEdit[] = [{ start: commandNode.start, end: commandNode.end, text: JSON.stringify(command) }];
  // A compact file (Claude Code writes its user file without spaces) stays compact.
  const compact = !/[,:][ \t\r\n]/.test(text.slice(entry.start, entry.end).replace(/"(?:[^"\\]|\\.)*"/g, '""'));
  if (argsNode) edits.push({ start: argsNode.start, end: argsNode.end, text: arrayText(text, argsNode, args, compact) });
  else {
    const multiline = text.slice(entry.start, entry.end).includes("\n");
    const gap = multiline ? "\n" + indentOf(text, commandNode.start) : compact ? "" : " ";
    edits.push({ start: commandNode.end, end: commandNode.end, text: `,${gap}"args":${compact ? "" : " "}${arrayText(text, undefined, args, compact)}` });
  }
  return edits;
}

/** An array of strings written the way the one it replaces was: on one line, or one item a line. */
function arrayText(text: string, old: JsonNode | undefined, items: string[], compact: boolean): string {
  const first = old?.kind === "array" ? old.items[0] : undefined;
  if (!old || !first || !text.slice(old.start, old.end).includes("\n") || items.length === 0) return `[${items.map((i) => JSON.stringify(i)).join(compact ? "," : ", ")}]`;
  const itemIndent = indentOf(text, first.start);
  const closeIndent = indentOf(text, old.end - 1);
  return `[\n${items.map((i) => itemIndent + JSON.stringify(i)).join(",\n")}\n${closeIndent}]`;
}

/** The whitespace at the start of the line that `at` is on. */
function indentOf(text: string, at: number): string {
  const lineStart = text.lastIndexOf("\n", at - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart, at))![0];
}
