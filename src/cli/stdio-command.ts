import { Option, type Command } from "commander";
import type { OnLogError } from "../log/log-health.js";
import type { PayloadMode } from "../log/payload.js";
import { addLogOptions, addPayloadOptions, addUiOptions, modeOption } from "./proxy-options.js";
import { parseFolder } from "./option-parsers.js";
import { stdioCommand } from "./stdio-launch.js";
import type { PolicyMode } from "../policy/config.js";

export interface StdioOptions {
  name?: string;
  /** Where pins.json goes; default: the per-user state folder (stdio/log-folder.ts). */
  caDir?: string;
  config?: string;
  mode?: PolicyMode;
  logFile?: string;
  logMaxSize?: number;
  logKeep?: number;
  auditChain?: boolean;
  auditDir?: string;
  ui?: boolean;
  uiPort?: number;
  onLogError?: OnLogError;
  payloads?: PayloadMode;
  maxPayloadBytes?: number;
  maxInspectBytes?: number;
  intercept?: string;
  interceptTimeout?: number;
}

export function registerStdioCommand(program: Command): Command {
  const cmd = program
    .command("stdio")
    .description("run a stdio MCP server and record every message between it and the client that launched this")
    .argument("<command...>", "the server's command and its arguments; put -- before it")
    .usage("[options] -- <command> [args...]")
    .addOption(new Option("--name <label>", "the server's name in records (server: stdio:LABEL); default: the command's base name"))
    .option("--config <file>", "policy file (YAML); default: the shipped config/policy.yaml")
    .addOption(modeOption())
    // No default here: a launch the client starts keeps its pins per user, never in the package's certs/
    // (a global install's folder, root's, or shared by every user).
    .addOption(new Option("--ca-dir <dir>", "folder whose pins.json holds the tool pins (the CA itself is not used); default: $XDG_STATE_HOME/mcp-wiretap/").argParser(parseFolder));
  addLogOptions(cmd);
  addPayloadOptions(cmd);
  addUiOptions(cmd);
  // The shared options, described as they apply here.
  const describe = (long: string, text: string): void => {
    const option = cmd.options.find((opt) => opt.long === long);
    if (option) option.description = text;
  };
  describe("--log-file", "write log records to this file (created 0600); default: a new file per launch in $XDG_STATE_HOME/mcp-wiretap/");
  describe("--max-inspect-bytes", "longest line decoded; a longer one is forwarded uninspected (monitor) or not at all (enforce)");
  describe("--on-log-error", "when records cannot be written: pass traffic with a loud error (block is not available for stdio yet)");
  cmd.addHelpText(
    "after",
    [
      "",
      "stdin and stdout are the MCP channel: records never go to stdout. Without --log-file each launch writes",
      "its own file in $XDG_STATE_HOME/mcp-wiretap/ (else ~/.local/state/mcp-wiretap/); read the newest with",
      "`mcp-wiretap tail --stdio-logs -f`, or browse them all with `mcp-wiretap ui` (no argument: that folder).",
      "--ui serves this server's messages live while it runs (a failure to serve it never stops the server).",
      "Exit code: the server's (128+n for signal n; 127 if it is not found).",
      "",
      "Example (what a client config launches):",
      "  mcp-wiretap stdio --name everything -- npx -y @modelcontextprotocol/server-everything stdio",
    ].join("\n"),
  );
  return cmd.action(async (command: string[], o: StdioOptions) => {
    // The client's stdin stays open: once the server is gone and the records are written, exit.
    process.exit(await stdioCommand(command, o));
  });
}

