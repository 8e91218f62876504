/**
 * One server entry of a client's config, whatever the file format: what it launches, where it sits in the
 * text, and how to rewrite its command and arguments. The wrapped form, and how to read it back:
 *
 *   command: <node>  args: [...<node options>, <mcp-wiretap main script>, "stdio", "--name", NAME, "--", COMMAND, ...ARGS]
 *
 * (or `mcp-wiretap stdio --name NAME -- COMMAND ARGS…` when mcp-wiretap is itself the command). Every other
 * field of the entry (env, cwd, type, disabled, …) stays as it was: the client applies them to the wrapper,
 * which passes its environment and folder on to the server.
 */
import path from "node:path";

export interface TextEdit {
  start: number;
  end: number;
  text: string;
}

/** "bridged": a remote server that `wrap --remote` made a stdio one through `mcp-wiretap bridge`. */
export type EntryKind = "stdio" | "wrapped" | "remote" | "bridged" | "unknown";

/** A remote entry `wrap --remote` can route through the bridge, with its headers. */
export interface RemoteServer {
  url: string;
  headers: Record<string, string>;
  /** Legacy HTTP+SSE (`type: "sse"`, Gemini's `url`) rather than Streamable HTTP. */
  sse: boolean;
}

export interface ServerEntry {
  name: string;
  /** Key path from the top of the document, e.g. ["mcpServers", "github"]. */
  where: string[];
  start: number;
  end: number;
  kind: EntryKind;
  /** For "unknown" and "remote": why the entry is left alone. */
  note?: string;
  command?: string;
  args?: string[];
  disabled?: boolean;
  /** A remote entry the bridge can take, or undefined (legacy SSE, an unknown shape). */
  remote?: RemoteServer;
  /** The edits that make the entry launch `command` with `args` (the rest of the entry untouched). */
  launch(command: string, args: string[]): TextEdit[];
  /** For a remote entry: the edit that makes it a stdio entry launching `command` with `args` and `env`. */
  toStdio?(command: string, args: string[], env: Record<string, string>): TextEdit[];
}

/**
 * A remote server as a stdio entry: `mcp-wiretap bridge URL --header-env NAME=MCP_WIRETAP_HEADER_N`, the
 * header values in the entry's env (not on the command line, which other users can list; and not as
 * `${VAR}`, which some clients expand themselves).
 */
export function bridgedLaunch(launcher: Launcher, remote: RemoteServer): { command: string; args: string[]; env: Record<string, string> } {
  const names = Object.keys(remote.headers);
  const variable = (i: number): string => `MCP_WIRETAP_HEADER_${i + 1}`;
  return {
    command: launcher.command,
    args: [...launcher.prefix, "bridge", remote.url, ...(remote.sse ? ["--transport", "sse"] : []), ...names.flatMap((name, i) => ["--header-env", `${name}=${variable(i)}`])],
    env: Object.fromEntries(names.map((name, i) => [variable(i), remote.headers[name]!])),
  };
}

function isBridged(command: string, args: readonly string[]): boolean {
  const k = subcommandIndex(command, args);
  return k >= 0 && args[k] === "bridge" && args[k + 1] !== undefined;
}

/** `mcp-wiretap mcp …`: run as itself, as node and its main script, or through a package runner (`npx -y mcp-wiretap@1 mcp`). */
function isOwnMcpServer(command: string, args: readonly string[]): boolean {
  const k = subcommandIndex(command, args);
  if (k >= 0) return args[k] === "mcp";
  if (!/^(npx|bunx|pnpx)(?:\.cmd|\.exe|\.ps1)?$/i.test(baseName(command))) return false;
  const at = args.findIndex((a) => /^mcp-wiretap(@[^/\s]+)?$/.test(a));
  return at >= 0 && args[at + 1] === "mcp";
}

/**
 * Where mcp-wiretap's subcommand is in `args` when the entry runs mcp-wiretap (itself, or node, its options
 * such as startup/node-flags.ts, and the main script); else -1.
 */
function subcommandIndex(command: string, args: readonly string[]): number {
  if (/^mcp-wiretap(?:\.cmd|\.exe|\.ps1)?$/i.test(baseName(command))) return 0;
  const script = args.findIndex((arg) => !arg.startsWith("--"));
  return script >= 0 && isMainScript(args[script]) ? script + 1 : -1;
}

/** How the wrapper starts itself: the runtime and the main script (absolute paths, so a client's short PATH does not matter). */
export interface Launcher {
  command: string;
  prefix: string[];
}

export function wrappedLaunch(launcher: Launcher, name: string, command: string, args: readonly string[]): { command: string; args: string[] } {
  return { command: launcher.command, args: [...launcher.prefix, "stdio", "--name", name, "--", command, ...args] };
}

/** The server's own command line inside a wrapped entry, or undefined when the entry is not one of ours. */
export function unwrappedLaunch(command: string, args: readonly string[]): { command: string; args: string[] } | undefined {
  const k = subcommandIndex(command, args);
  if (k < 0 || args[k] !== "stdio" || args[k + 1] !== "--name" || args[k + 3] !== "--" || args[k + 4] === undefined) return undefined;
  return { command: args[k + 4]!, args: args.slice(k + 5) };
}

function isMainScript(arg: string | undefined): boolean {
  if (arg === undefined) return false;
  const parts = arg.split(/[\\/]/);
  return (parts.at(-1) === "main.js" && parts.at(-2) === "cli") || /^mcp-wiretap(?:\.js|\.mjs)?$/.test(parts.at(-1) ?? "");
}

function baseName(file: string): string {
  return path.win32.basename(file);
}

/** Entry kinds from the fields a client reads: a URL makes a remote server, a command a local one. */
export function classify(fields: { command?: unknown; args?: unknown; url?: unknown; type?: unknown }): { kind: EntryKind; note?: string } {
  if (fields.url !== undefined) return { kind: "remote", note: "a remote server (by URL): the client connects to it itself" };
  if (fields.type !== undefined && fields.type !== "stdio") return { kind: "unknown", note: `type ${JSON.stringify(fields.type)} is not stdio` };
  if (typeof fields.command !== "string" || fields.command === "") return { kind: "unknown", note: "no command to launch" };
  if (fields.args !== undefined && !(Array.isArray(fields.args) && fields.args.every((a) => typeof a === "string"))) {
    return { kind: "unknown", note: "args is not a list of strings" };
  }
  const args = (fields.args as string[] | undefined) ?? [];
  if (isBridged(fields.command, args)) return { kind: "bridged" };
  if (isOwnMcpServer(fields.command, args)) return { kind: "unknown", note: "mcp-wiretap's own MCP server over the logs: it carries no traffic to record" };
  return { kind: unwrappedLaunch(fields.command, args) ? "wrapped" : "stdio" };
}
