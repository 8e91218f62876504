import { Option, type Command } from "commander";
import { addProxyOptions, toStartOptions } from "./proxy-options.js";

/** `bridge URL`: a stdio server that forwards to a remote MCP server through an embedded proxy. */
export function registerBridgeCommand(program: Command): Command {
  const cmd = program
    .command("bridge")
    .description("a stdio MCP server that is the remote one at URL (Streamable HTTP), every message recorded by an embedded proxy")
    .argument("<url>", "the remote MCP server's endpoint, e.g. https://mcp.example.com/mcp")
    .option("--header <name: value>", "send this header on every request (credentials are redacted in records); ${VAR} in the value is taken from the environment; repeatable", (v: string, all: string[]) => [...all, v], [] as string[])
    .addOption(new Option("--transport <transport>", "streamable (Streamable HTTP) or sse (legacy HTTP+SSE: URL is the event stream)").choices(["streamable", "sse"]).default("streamable"))
    .option("--header-env <name=VAR>", "send header NAME with the value of environment variable VAR; repeatable", (v: string, all: string[]) => [...all, v], [] as string[]);
  addProxyOptions(cmd, { port: 0 });
  const logFile = cmd.options.find((opt) => opt.long === "--log-file");
  if (logFile) logFile.description = "write log records to this file (created 0600); default: a new file per launch in $XDG_STATE_HOME/mcp-wiretap/";
  cmd.addHelpText(
    "after",
    [
      "",
      "stdin and stdout are the MCP channel of the client that launched this. The embedded proxy listens on a",
      "free loopback port; its banner and warnings go to stderr. Exit when the client closes stdin.",
      "",
      "Example (a desktop client's entry for a remote server):",
      '  mcp-wiretap bridge https://mcp.example.com/mcp --header "Authorization: Bearer $TOKEN"',
    ].join("\n"),
  );
  return cmd.action(async (url: string, o: Record<string, unknown>) => {
    const { runBridge } = await import("../bridge/run-bridge.js");
    process.exit(await runBridge({ url, headers: (o.header as string[]) ?? [], headerEnv: (o.headerEnv as string[]) ?? [], transport: o.transport as "streamable" | "sse", start: toStartOptions(o) }));
  });
}
