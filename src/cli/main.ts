#!/usr/bin/env node
import { Command, CommanderError, Option } from "commander";
import { CaError } from "../ca/index.js";
import { TrustError } from "../proxy/upstream-trust.js";
import { PolicyConfigError } from "../policy/load-config.js";
import { LogFileError } from "../log/logger.js";
import { PinStoreError } from "../policy/pin-store.js";
import { caPathCommand, caShowCommand } from "./ca-commands.js";
import { verifyLogCommand } from "./verify-log.js";
import { pinsApproveCommand, pinsListCommand } from "./pins-commands.js";
import { ExplainInputError, policyCheckCommand, policyExplainCommand, type ExplainOptions } from "./policy-commands.js";
import { VERSION } from "./package-info.js";
import { addProxyOptions, caDirOption, toStartOptions } from "./proxy-options.js";
import { startCommand, StartError } from "./start.js";
import { registerRunCommand } from "./run.js";
import { registerEnvCommand } from "./env-command.js";
import { registerTailCommand } from "./tail/command.js";
import { registerExportCommand } from "./har/command.js";

/** Exit codes: 0 ok, 1 runtime failure, 2 bad usage or configuration. */
const USAGE = 2;

export function buildProgram(): Command {
  const program = new Command("mcp-wiretap")
    .description("Decrypts and decodes MCP traffic of any client that uses it as HTTPS_PROXY, into JSON log records.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();

  addProxyOptions(program.command("start", { isDefault: true }).description("run the proxy (the default command)"), { port: 8080 }).action(
    async (o: Record<string, unknown>) => startCommand(toStartOptions(o)),
  );

  const ca = program.command("ca").description("the proxy's certificate authority");
  ca.command("path")
    .description("print the absolute path of the CA certificate (PEM), creating the CA if needed")
    .addOption(caDirOption())
    .action((o: { caDir: string }) => caPathCommand(o));
  ca.command("show")
    .description("print the CA's subject, validity and SHA-256 fingerprint")
    .addOption(caDirOption())
    .option("--json", "as JSON")
    .action((o: { caDir: string; json?: boolean }) => caShowCommand(o));
  const policy = program.command("policy").description("check and explain policy files");
  policy
    .command("check")
    .argument("<file>", "policy file (YAML)")
    .description("validate a policy file and summarise it")
    .action((file: string) => policyCheckCommand(file));
  policy
    .command("explain")
    .argument("<file>", "policy file (YAML)")
    .description("show which rules and detectors a message would fire, and why")
    .requiredOption("--message <json>", "the JSON-RPC message")
    .option("--server <host:port>", "the real destination", "mcp.example.com:443")
    .addOption(new Option("--direction <direction>", "default: requests and notifications client_to_server, responses server_to_client").choices(["client_to_server", "server_to_client"]))
    .option("--method <method>", "for a response: the method of the request it answers")
    .option("--json", "as JSON")
    .action((file: string, o: ExplainOptions) => policyExplainCommand(file, o));

  program
    .command("verify-log")
    .argument("<files...>", "log files written with --audit-chain, oldest first (rotated: file.2 file.1 file)")
    .description("find edited, removed or reordered records in an audit-chained log")
    .option("--json", "as JSON")
    .action((files: string[], o: { json?: boolean }) => verifyLogCommand(files, o));

  const pins = program.command("pins").description("the tool-pinning store (trust on first use)");
  pins
    .command("list")
    .description("list pinned tools per server, and changes awaiting approval")
    .addOption(caDirOption())
    .option("--pins <file>", "pin store (default: pins.json in the CA folder)")
    .option("--json", "as JSON")
    .action((o: { caDir: string; pins?: string; json?: boolean }) => pinsListCommand(o));
  pins
    .command("approve")
    .argument("<server>", "host:port as in the records")
    .argument("[tools...]", "tool names (default: every tool awaiting approval)")
    .description("trust the tool definitions seen last")
    .addOption(caDirOption())
    .option("--pins <file>", "pin store (default: pins.json in the CA folder)")
    .action((server: string, tools: string[], o: { caDir: string; pins?: string }) => pinsApproveCommand(server, tools, o));
  registerTailCommand(program);
  registerExportCommand(program);
  registerRunCommand(program);
  registerEnvCommand(program);
  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exit(err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.exitCode === 0 ? 0 : USAGE);
    }
    if (
      err instanceof CaError ||
      err instanceof TrustError ||
      err instanceof StartError ||
      err instanceof PolicyConfigError ||
      err instanceof PinStoreError ||
      err instanceof ExplainInputError ||
      err instanceof LogFileError
    ) {
      process.stderr.write(`mcp-wiretap: ${err.message}\n`);
      process.exit(USAGE);
    }
    const e = err as NodeJS.ErrnoException;
    if (e.code === "EADDRINUSE" || e.code === "EACCES" || e.code === "EADDRNOTAVAIL") {
      process.stderr.write(`mcp-wiretap: cannot listen: ${e.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`mcp-wiretap: ${e.stack ?? String(err)}\n`);
    process.exit(1);
  }
}

await main(process.argv);
