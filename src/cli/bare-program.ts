import type { Command } from "commander";
import { HintingCommand } from "./hinting-command.js";
import { VERSION } from "../util/package-info.js";

/** The program with no command yet: its name, version and how it reports errors. */
export function bareProgram(): Command {
  return new HintingCommand("mcp-wiretap")
    .description("Decrypts and decodes MCP traffic of any client that uses it as HTTPS_PROXY, into JSON log records.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .enablePositionalOptions(); // lets `run` hand options after its command to the command
}
