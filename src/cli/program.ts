/** The command line: every command and its options (run-program.ts turns a failure into an exit code). Loaded by main.ts. */
import { type Command, Option } from "commander";
import type { ExplainOptions } from "./policy-commands.js";
import { addProxyOptions, caDirOption, toStartOptions } from "./proxy-options.js";
import { registerRunCommand } from "./run.js";
import { registerEnvCommand } from "./env-command.js";
import { registerTailCommand } from "./tail/command.js";
import { registerExportCommand } from "./har/command.js";
import { registerAnalysisCommands } from "./analysis-commands.js";
import { registerStdioCommand } from "./stdio-command.js";
import { registerUiCommand } from "./ui-command.js";
import { registerReplayCommand } from "./replay-command.js";
import { registerMcpCommand } from "./mcp-command.js";
import { registerMockCommand } from "./mock-command.js";
import { registerWrapCommands } from "./wrap-command.js";
import { registerBridgeCommand } from "./bridge-command.js";
import { registerDemoCommand } from "./demo-command.js";
import { runProgram } from "./run-program.js";
import { bareProgram } from "./bare-program.js";

export function buildProgram(): Command {
  const program = bareProgram();

  addProxyOptions(program.command("start", { isDefault: true }).description("run the proxy (the default command)"), { port: 8080 }).action(
    async (o: Record<string, unknown>) => (await import("./start.js")).startCommand(toStartOptions(o)),
  );

  const ca = program.command("ca").description("the proxy's certificate authority");
  ca.command("path")
    .description("print the absolute path of the CA certificate (PEM), creating the CA if needed")
    .addOption(caDirOption())
    .action(async (o: { caDir: string }) => (await import("./ca-commands.js")).caPathCommand(o));
  ca.command("show")
    .description("print the CA's subject, validity and SHA-256 fingerprint")
    .addOption(caDirOption())
    .option("--json", "as JSON")
    .action(async (o: { caDir: string; json?: boolean }) => (await import("./ca-commands.js")).caShowCommand(o));
  const policy = program.command("policy").description("check and explain policy files");
  policy
    .command("check")
    .argument("<file>", "policy file (YAML)")
    .description("validate a policy file and summarise it")
    .action(async (file: string) => (await import("./policy-commands.js")).policyCheckCommand(file));
  policy
    .command("explain")
    .argument("<file>", "policy file (YAML)")
    .description("show which rules and detectors a message would fire, and why")
    .requiredOption("--message <json>", "the JSON-RPC message")
    .option("--server <host:port>", "the real destination", "mcp.example.com:443")
    .addOption(new Option("--direction <direction>", "default: requests and notifications client_to_server, responses server_to_client").choices(["client_to_server", "server_to_client"]))
    .option("--method <method>", "for a response: the method of the request it answers")
    .option("--json", "as JSON")
    .action(async (file: string, o: ExplainOptions) => (await import("./policy-commands.js")).policyExplainCommand(file, o));

  program
    .command("verify-log")
    .argument("<files...>", "log files written with --audit-chain, oldest first (rotated: file.2 file.1 file)")
    .description(
      "find edited, forged, removed or reordered records and a cut end in an audit-chained log; " +
        "exit 0 intact, 1 problems found, 2 a file cannot be read, 3 no audit key (only unkeyed hashes checked), " +
        "4 intact but no audit state (whether the end was cut could not be checked)",
    )
    .addOption(caDirOption())
    .option("--audit-dir <dir>", "folder of the audit key and states (default: audit/ in the CA folder)")
    .option("--state <file>", "the audit state to compare the log's end with (a copy carried along with the log); default: found by the log's path or the chain's identity")
    .option("--json", "as JSON")
    .action(async (files: string[], o: { json?: boolean; caDir: string; auditDir?: string; state?: string }) =>
      (await import("./verify-log.js")).verifyLogCommand(files, o),
    );

  const pins = program.command("pins").description("the tool-pinning store (trust on first use)");
  pins
    .command("list")
    .description("list pinned tools per server, and changes awaiting approval")
    .addOption(caDirOption())
    .option("--pins <file>", "pin store (default: pins.json in the CA folder)")
    .addOption(new Option("--state <url>", "the shared store of replicas instead (redis://HOST:PORT/DB)").env("MCP_WIRETAP_STATE_URL"))
    .option("--json", "as JSON")
    .action(async (o: { caDir: string; pins?: string; state?: string; json?: boolean }) => (await import("./pins-commands.js")).pinsListCommand(o));
  pins
    .command("approve")
    .argument("<server>", "host:port as in the records")
    .argument("[tools...]", "tool names (default: every tool awaiting approval)")
    .description("trust the tool definitions seen last")
    .addOption(caDirOption())
    .option("--pins <file>", "pin store (default: pins.json in the CA folder)")
    .addOption(new Option("--state <url>", "the shared store of replicas instead (redis://HOST:PORT/DB)").env("MCP_WIRETAP_STATE_URL"))
    .action(async (server: string, tools: string[], o: { caDir: string; pins?: string; state?: string }) =>
      (await import("./pins-commands.js")).pinsApproveCommand(server, tools, o),
    );
  registerTailCommand(program);
  registerExportCommand(program);
  registerRunCommand(program);
  registerEnvCommand(program);
  registerAnalysisCommands(program);
  registerStdioCommand(program);
  registerUiCommand(program);
  registerReplayCommand(program);
  registerMcpCommand(program);
  registerMockCommand(program);
  registerWrapCommands(program);
  registerBridgeCommand(program);
  registerDemoCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await runProgram(buildProgram(), argv);
}
