/** `mcp-wiretap mcp`: options only; the server (and the MCP SDK) is loaded only when it runs. */
import { Option, type Command } from "commander";
import { caDirOption } from "./proxy-options.js";
import { collect, parsePort, parsePositiveInt } from "./option-parsers.js";

export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .argument("[paths...]", "NDJSON logs or folders of them (rotated files included); none: the logs of `mcp-wiretap stdio`; all followed as they grow")
    .description("serve the recorded traffic to MCP clients (coding agents) as an MCP server: on stdio, or Streamable HTTP with --port")
    .addOption(new Option("--port <port>", "serve Streamable HTTP on 127.0.0.1:PORT (0: any free port) instead of stdio; a bearer token is printed once").argParser(parsePort))
    .option("--allow-replay", "offer the replay_call tool (re-sends a captured request, as `mcp-wiretap replay`)", false)
    .option("--config <file>", "with --allow-replay: the policy the replays go through")
    .option("--upstream-ca <file>", "with --allow-replay: extra trusted root(s) for the server's TLS, PEM; repeatable", collect, [])
    .addOption(new Option("--timeout <ms>", "with --allow-replay: how long a replay waits for each answer").default(60_000).argParser(parsePositiveInt))
    .addOption(caDirOption())
    .addHelpText(
      "after",
      [
        "",
        "An agent's MCP config entry (Claude Code, Cursor, VS Code: see README.md):",
        '  { "command": "npx", "args": ["-y", "mcp-wiretap", "mcp"] }',
        "Tools: list_sessions, search_messages, get_exchange, recent_failures, stats, check, tool_catalog",
        "(replay_call with --allow-replay). Resources: wiretap://session/<id>. Prompt: diagnose_failure.",
      ].join("\n"),
    )
    .action(async (paths: string[], o: Record<string, unknown>) => {
      const { mcpCommand } = await import("../mcp-server/command.js");
      await mcpCommand(paths, o as unknown as Parameters<typeof mcpCommand>[1]);
    });
}
