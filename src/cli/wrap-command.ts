import { realpathSync } from "node:fs";
import os from "node:os";
import type { Command } from "commander";
import { CLIENT_IDS } from "../client-configs/clients.js";
import { stdioLogFolder } from "../stdio/log-folder.js";
import { WRAPPED_NODE_FLAGS } from "../startup/node-flags.js";

interface WrapOptions {
  client?: string;
  config?: string;
  dryRun?: boolean;
  remote?: boolean;
}

/** `wrap` and `unwrap`: edit the MCP configs of desktop and terminal clients so their stdio servers run through `mcp-wiretap stdio`. */
export function registerWrapCommands(program: Command): void {
  for (const action of ["wrap", "unwrap"] as const) {
    const cmd = program.command(action);
    if (action === "wrap") cmd.option("--remote", "also route servers listed by URL (Streamable HTTP) through `mcp-wiretap bridge`");
    cmd
      .description(
        action === "wrap"
          ? "make a client launch its stdio servers through `mcp-wiretap stdio` (edits the client's MCP config; a backup is kept)"
          : "put back the servers `wrap` changed, exactly as they were",
      )
      .argument("[servers...]", "server names (default: all)")
      .option("--client <name>", `${CLIENT_IDS.join(", ")}, or all`, "all")
      .option("--config <file>", "this config file instead of the ones the client reads")
      .option("--dry-run", "print what would change, as a diff, and change nothing")
      .action(async (servers: string[], o: WrapOptions) => {
        const { runWrap } = await import("../client-configs/run-wrap.js");
        const code = await runWrap(
          {
            action,
            servers,
            client: o.client,
            config: o.config,
            dryRun: o.dryRun === true,
            remote: o.remote === true,
            // The absolute runtime and script of this very CLI, so the client's short PATH does not matter.
            launcher: { command: process.execPath, prefix: [...WRAPPED_NODE_FLAGS, realpathSync(process.argv[1]!)] },
            stateDir: stdioLogFolder(),
            platform: { platform: process.platform, env: process.env, home: os.homedir(), cwd: process.cwd() },
          },
          (line) => process.stdout.write(line + "\n"),
        );
        process.exitCode = code;
      });
  }
}
