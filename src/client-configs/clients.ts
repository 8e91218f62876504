/**
 * Where each MCP client keeps its server list, on Linux, macOS and Windows, and under which key. Checked
 * against each client's documentation (2026): Claude Desktop, Claude Code, Cursor, VS Code, Windsurf,
 * Codex CLI, Gemini CLI.
 */
import path from "node:path";

export const CLIENT_IDS = ["claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "codex", "gemini"] as const;
export type ClientId = (typeof CLIENT_IDS)[number];

export type ConfigFormat = "json" | "toml";

/** One file a client reads its servers from. `tables`: key paths to the objects of servers ("*": any key). */
export interface ConfigLocation {
  client: ClientId;
  scope: "user" | "project";
  file: string;
  format: ConfigFormat;
  tables: string[][];
}

export interface Platform {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
  cwd: string;
}

const MCP_SERVERS = [["mcpServers"]];
const CLAUDE_USER_TABLES = [["mcpServers"], ["projects", "*", "mcpServers"]];

/** Every file each client may read, user files first, for the given platform. */
export function configLocations(p: Platform, clients: readonly ClientId[] = CLIENT_IDS): ConfigLocation[] {
  const join = p.platform === "win32" ? path.win32.join : path.posix.join;
  const home = (...parts: string[]): string => join(p.home, ...parts);
  const project = (...parts: string[]): string => join(p.cwd, ...parts);
  // Per-user application data: %APPDATA% on Windows, Application Support on macOS, XDG on Linux.
  const appData = (...parts: string[]): string => {
    if (p.platform === "win32") return join(p.env.APPDATA ?? home("AppData", "Roaming"), ...parts);
    if (p.platform === "darwin") return home("Library", "Application Support", ...parts);
    const xdg = p.env.XDG_CONFIG_HOME;
    return join(xdg && path.posix.isAbsolute(xdg) ? xdg : home(".config"), ...parts);
  };
  const codexHome = p.env.CODEX_HOME ? p.env.CODEX_HOME : home(".codex");
  const claudeHome = p.env.CLAUDE_CONFIG_DIR ? p.env.CLAUDE_CONFIG_DIR : p.home;
  const all: Record<ClientId, Array<Omit<ConfigLocation, "client">>> = {
    "claude-desktop": [{ scope: "user", file: appData("Claude", "claude_desktop_config.json"), format: "json", tables: MCP_SERVERS }],
    "claude-code": [
      // The user file holds user-scope servers and, per project folder, local-scope ones.
      { scope: "user", file: join(claudeHome, ".claude.json"), format: "json", tables: CLAUDE_USER_TABLES },
      { scope: "project", file: project(".mcp.json"), format: "json", tables: MCP_SERVERS },
    ],
    cursor: [
      { scope: "user", file: home(".cursor", "mcp.json"), format: "json", tables: MCP_SERVERS },
      { scope: "project", file: project(".cursor", "mcp.json"), format: "json", tables: MCP_SERVERS },
    ],
    vscode: [
      { scope: "user", file: appData("Code", "User", "mcp.json"), format: "json", tables: [["servers"]] },
      { scope: "project", file: project(".vscode", "mcp.json"), format: "json", tables: [["servers"]] },
    ],
    windsurf: [{ scope: "user", file: home(".codeium", "windsurf", "mcp_config.json"), format: "json", tables: MCP_SERVERS }],
    codex: [
      { scope: "user", file: join(codexHome, "config.toml"), format: "toml", tables: [["mcp_servers"]] },
      { scope: "project", file: project(".codex", "config.toml"), format: "toml", tables: [["mcp_servers"]] },
    ],
    gemini: [
      { scope: "user", file: home(".gemini", "settings.json"), format: "json", tables: MCP_SERVERS },
      { scope: "project", file: project(".gemini", "settings.json"), format: "json", tables: MCP_SERVERS },
    ],
  };
  // A project file that is the user file too (run from the home folder) is listed once.
  const seen = new Set<string>();
  return clients.flatMap((client) => all[client].map((loc) => ({ client, ...loc }))).filter((loc) => !seen.has(loc.file) && seen.add(loc.file));
}

/** The client whose file this is, from its name, or undefined when the name does not say. */
export function clientOfFile(file: string): ClientId | undefined {
  const base = path.basename(file);
  const parent = path.basename(path.dirname(file));
  if (base === "claude_desktop_config.json") return "claude-desktop";
  if (base === ".mcp.json" || base === ".claude.json") return "claude-code";
  if (base === "mcp_config.json") return "windsurf";
  if (base === "config.toml" && parent === ".codex") return "codex";
  if (base === "settings.json" && parent === ".gemini") return "gemini";
  if (base === "mcp.json" && parent === ".cursor") return "cursor";
  if (base === "mcp.json" && (parent === ".vscode" || parent === "User")) return "vscode";
  return undefined;
}

/** The location of a file named with --config, read the way its client reads it. */
export function locationOfFile(file: string, client: ClientId): ConfigLocation {
  const tables =
    client === "vscode" ? [["servers"]] : client === "codex" ? [["mcp_servers"]] : client === "claude-code" && path.basename(file) !== ".mcp.json" ? CLAUDE_USER_TABLES : MCP_SERVERS;
  return { client, scope: "user", file, format: client === "codex" ? "toml" : "json", tables };
}
