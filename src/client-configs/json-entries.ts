/** The server entries of a JSON (or JSONC) client config, found in the tree that keeps their place in the text. */
import { type JsonNode, parseJsonc, plainValue, propOf } from "./jsonc-tree.js";
import type { ClientId } from "./clients.js";
import { classify, type RemoteServer, type ServerEntry, type TextEdit } from "./server-entry.js";

export interface FoundEntries {
  entries: ServerEntry[];
  /** Tables or entries left alone, and why. */
  notes: string[];
}

/** Throws JsoncError when the text is not JSON with comments. */
export function findJsonEntries(text: string, tables: string[][], client?: ClientId): FoundEntries {
  const root = parseJsonc(text);
  const found: FoundEntries = { entries: [], notes: [] };
  for (const pattern of tables) for (const { node, where } of walk(root, pattern, [], found.notes)) collect(text, node, where, found, client);
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

function collect(text: string, table: JsonNode, where: string[], found: FoundEntries, client: ClientId | undefined): void {
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
    found.entries.push(entryOf(text, prop.key, entryWhere, prop.value, client));
  });
}

function entryOf(text: string, name: string, where: string[], node: JsonNode, client: ClientId | undefined): ServerEntry {
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
  const command = kind === "stdio" || kind === "wrapped" || kind === "bridged" ? (field("command") as string) : undefined;
  const args = command === undefined ? undefined : ((field("args") as string[] | undefined) ?? []);
  const remote = kind === "remote" ? remoteOf(field, client) : undefined;
  return {
    ...base,
    kind,
    note: kind === "remote" && !remote ? `${note}; not one the bridge takes (not http(s), or headers that are not text)` : note,
    command,
    args,
    disabled,
    ...(remote ? { remote, toStdio: (c: string, a: string[], env: Record<string, string>) => [stdioEntryEdit(text, node, c, a, env)] } : {}),
    launch: (c, a) => launchEdits(text, node, c, a),
  };
}

const URL_KEYS = ["url", "serverUrl", "httpUrl", "headers"];

/** A remote entry with text headers: Streamable HTTP, or legacy SSE (`type: "sse"`, Gemini's `url`). */
function remoteOf(field: (key: string) => unknown, client: ClientId | undefined): RemoteServer | undefined {
  const type = field("type");
  const url = field("httpUrl") ?? field("serverUrl") ?? field("url");
  const sse = type === "sse" || (client === "gemini" && field("httpUrl") === undefined);
  if (typeof url !== "string" || !/^https?:\/\//i.test(url) || field("command") !== undefined || field("env") !== undefined) return undefined;
  const headers = field("headers") ?? {};
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) return undefined;
  if (!Object.values(headers).every((v) => typeof v === "string")) return undefined;
  return { url, headers: headers as Record<string, string>, sse };
}

/** The whole entry rewritten as a stdio one: the URL fields give way to command, args and env; the rest is kept in order. */
function stdioEntryEdit(text: string, entry: JsonNode & { kind: "object" }, command: string, args: string[], env: Record<string, string>): TextEdit {
  const out: Array<[string, unknown]> = [];
  let placed = false;
  for (const prop of entry.props) {
    if (prop.key !== "type" && !URL_KEYS.includes(prop.key)) {
      out.push([prop.key, plainValue(prop.value)]);
      continue;
    }
    if (prop.key === "type") out.push(["type", "stdio"]);
    if (!placed) out.push(["command", command], ["args", args], ...(Object.keys(env).length > 0 ? [["env", env] as [string, unknown]] : []));
    placed = true;
  }
  const value = Object.fromEntries(out);
  const body = text.slice(entry.start, entry.end);
  if (!body.includes("\n")) return { start: entry.start, end: entry.end, text: JSON.stringify(value) };
  const base = indentOf(text, entry.start);
  const first = entry.props[0];
  const unit = first ? indentOf(text, first.keyStart).slice(base.length) || "  " : "  ";
  return { start: entry.start, end: entry.end, text: JSON.stringify(value, null, unit).replace(/\n/g, "\n" + base) };
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
