import net from "node:net";
/** The command line: every command, its options, and how a failure becomes an exit code. Loaded by main.ts. */
import { type Command, CommanderError, Option } from "commander";
import { UsageError } from "../util/usage-error.js";
import { HintingCommand } from "./hinting-command.js";
import type { ExplainOptions } from "./policy-commands.js";
import { VERSION } from "./package-info.js";
import { addProxyOptions, caDirOption, toStartOptions } from "./proxy-options.js";
import { registerRunCommand } from "./run.js";
import { registerEnvCommand } from "./env-command.js";
import { registerTailCommand } from "./tail/command.js";
import { registerExportCommand } from "./har/command.js";
import { registerAnalysisCommands } from "./analysis-commands.js";
import { registerStdioCommand } from "./stdio-command.js";
import { registerUiCommand } from "./ui-command.js";
import { registerReplayCommand } from "./replay-command.js";
import { registerMockCommand } from "./mock-command.js";
import { registerWrapCommands } from "./wrap-command.js";
import { registerBridgeCommand } from "./bridge-command.js";
import { registerDemoCommand } from "./demo-command.js";

/** Exit codes: 0 ok, 1 runtime failure, 2 bad usage or configuration. */
const USAGE = 2;

export function buildProgram(): Command {
  const program = new HintingCommand("mcp-wiretap")
    .description("Decrypts and decodes MCP traffic of any client that uses it as HTTPS_PROXY, into JSON log records.")
    .version(VERSION, "-v, --version")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .enablePositionalOptions(); // lets `run` hand options after its command to the command

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
  registerMockCommand(program);
  registerWrapCommands(program);
  registerBridgeCommand(program);
  registerDemoCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exit(err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.exitCode === 0 ? 0 : USAGE);
    }
    if (err instanceof UsageError) {
      process.stderr.write(`mcp-wiretap: ${err.message}\n`);
      process.exit(USAGE);
    }
    const e = err as NodeJS.ErrnoException;
    if (e.code === "EADDRINUSE" || e.code === "EACCES" || e.code === "EADDRNOTAVAIL") {
      process.stderr.write(`mcp-wiretap: cannot listen: ${e.message}\n${await listenAdvice(e as ListenError)}\n`);
      process.exit(1);
    }
    process.stderr.write(`mcp-wiretap: ${e.stack ?? String(err)}\n`);
    process.exit(1);
  }
}

type ListenError = NodeJS.ErrnoException & { port?: number; address?: string; flag?: string };

/** The next step after a failed listen, naming the option that chose the port and a port that is free now. */
async function listenAdvice(e: ListenError): Promise<string> {
  const port = typeof e.port === "number" ? e.port : undefined;
  const flag = e.flag ?? "--port";
  switch (e.code) {
    case "EADDRINUSE": {
      if (port === undefined) return `  the port is in use: pick another one (${flag} 0 picks any free port)`;
      const free = await freePortNear(port, e.address);
      return `  port ${port} is in use (another mcp-wiretap?): stop what uses it, or pick another port: ${free === null ? "" : `${flag} ${free} (free now), or `}${flag} 0 for any free port`;
    }
    case "EACCES":
      return `  this port needs privileges (ports below 1024 on most systems): use ${flag} 8080, or ${flag} 0 for any free port`;
    default:
      return `  ${e.address ?? "the --host address"} is not an address of this machine: use --host 127.0.0.1`;
  }
}

/** The first of the next few ports that can be listened on now, or null. */
async function freePortNear(port: number, host = "127.0.0.1"): Promise<number | null> {
  for (let candidate = port + 1; candidate <= Math.min(port + 20, 65535); candidate++) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once("error", () => resolve(false));
      probe.listen(candidate, host, () => probe.close(() => resolve(true)));
    });
    if (free) return candidate;
  }
  return null;
}
