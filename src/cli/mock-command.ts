/** `mcp-wiretap mock`: options only; the work is in src/mock/. */
import { InvalidArgumentError, Option, type Command } from "commander";
import { MATCH_MODES } from "../mock/matcher.js";
import { parsePort } from "./option-parsers.js";

export function registerMockCommand(program: Command): Command {
  return program
    .command("mock")
    .description("serve a capture as an MCP server: the recorded handshake, list results and call answers")
    .argument("<logs...>", "NDJSON logs or folders of them, holding the server's traffic")
    .option("--stdio", "serve over stdin/stdout (for a client's config) instead of HTTP", false)
    .addOption(new Option("--port <port>", "serve Streamable HTTP on this loopback port (default: any free port; the URL is printed)").argParser(parsePort))
    .addOption(new Option("--match <mode>", "how a call finds its answer: exact params; tool: exact, else the tool's latest; sequence: in recorded order").choices(MATCH_MODES).default("exact"))
    .option("--legacy", "serve the legacy HTTP+SSE transport (GET /sse, POST /message) instead of Streamable HTTP", false)
    .option("--server <name>", "which recorded server, when the log holds several: its serverInfo name or host:port")
    .addOption(new Option("--speed <x>", "progress timing: 1 as recorded, 2 twice as fast, 0 no waiting").default(1).argParser(parseSpeed))
    .addHelpText(
      "after",
      [
        "",
        "An unmatched call gets a JSON-RPC error (-32001) naming the nearest recorded call and the argument paths",
        "that differ. Ids and progress tokens are the client's. HTTP listens on 127.0.0.1 only.",
        "",
        "Examples:",
        "  mcp-wiretap mock capture.ndjson --stdio                  # in a client's MCP config",
        "  mcp-wiretap mock capture.ndjson --port 8765 --match tool # http://127.0.0.1:8765/mcp",
      ].join("\n"),
    )
    .action(async (logs: string[], o: Record<string, unknown>) => {
      const { mockCommand } = await import("../mock/mock.js");
      const code = await mockCommand(logs, o as unknown as Parameters<typeof mockCommand>[1], { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
      process.exit(code);
    });
}

function parseSpeed(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(n)) throw new InvalidArgumentError("must be a number, 0 or more.");
  return n;
}
