/** `mcp-wiretap replay`: options only; the work is in src/replay/. */
import { Option, type Command } from "commander";
import { caDirOption, addPayloadOptions } from "./proxy-options.js";
import { collect, parsePositiveInt } from "./option-parsers.js";

export function registerReplayCommand(program: Command): Command {
  const cmd = program
    .command("replay")
    .description("re-send one captured request to its server in a fresh MCP session, through the policy, and print the answer")
    .argument("<log>", "NDJSON log holding the request (- for stdin)")
    .argument("[command...]", "with --stdio: the server's command and its arguments, after --")
    .usage("<log> (--call <flow>#<id> | --last <filter>) [options] [--stdio -- <command> [args...]]")
    .option("--call <flow#id>", "the request: its flow and JSON-RPC id, as `tail -v` shows under it")
    .option("--last <filter>", "the latest request tail's filter tokens select (e.g. 'tool:echo server:*.example.com')")
    .option("--set <path=JSON>", "change one value of the params first, e.g. --set arguments.message='\"hi\"'; repeatable", collect, [])
    .option("--params <file>", "send these params (a JSON object; - for stdin) instead of the captured ones")
    .option("--server <url>", "send it to this server instead (e.g. staging)")
    .option("--header <'Name: value'>", "send this header too, e.g. credentials (never recorded, masked); repeatable", collect, [])
    .option("--diff", "show the answer beside the captured one", false)
    .option("--yes", "replay a tool call the capture does not show as read-only without asking", false)
    .option("--print-curl", "print the replay as curl commands (credentials as placeholders) instead of sending it", false)
    .option("--input <file>", "a call that asks for input (input_required): answer its first round with these inputResponses (JSON object; - for stdin)")
    .option("--stdio", "replay against the stdio server whose command follows --", false)
    .option("--log-file <file>", "where the replay's records go (default: appended to LOG)")
    .option("--config <file>", "policy file (YAML); default: the shipped config/policy.yaml")
    .option("--upstream-ca <file>", "extra trusted root(s) for the server's TLS, PEM; repeatable", collect, [])
    .option("--insecure-upstream", "do not verify the server's certificate (its records say so)", false)
    .addOption(new Option("--timeout <ms>", "how long to wait for each answer").default(60_000).argParser(parsePositiveInt))
    .addOption(caDirOption());
  addPayloadOptions(cmd);
  cmd.addHelpText(
    "after",
    [
      "",
      "The replay goes through the same pipeline as live traffic: the policy judges it (enforce mode can deny",
      "it) and every record it writes carries replayOf: \"<flow>#<id>\". Exit code: 0 answered with a result,",
      "1 answered with an error (or not answered), 2 bad usage or refused.",
      "",
      "Examples:",
      "  mcp-wiretap replay mcp.ndjson --last tool:echo --set arguments.message='\"hi\"' --diff --yes",
      "  mcp-wiretap replay mcp.ndjson --call 3f2a9c1e-…#7 --header 'Authorization: Bearer …'",
      "  mcp-wiretap replay stdio.ndjson --last tool:echo --yes --stdio -- npx -y @modelcontextprotocol/server-everything stdio",
    ].join("\n"),
  );
  return cmd.action(async (log: string, command: string[], o: Record<string, unknown>) => {
    const { replayCommand } = await import("../replay/replay.js");
    process.exitCode = await replayCommand(log, command, { ...(o as object), timeoutMs: o.timeout as number } as Parameters<typeof replayCommand>[2], {
      stdout: process.stdout,
      stderr: process.stderr,
      stdin: process.stdin,
    });
  });
}
