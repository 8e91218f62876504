import { Option, type Command } from "commander";
import { parsePort } from "../../cli/option-parsers.js";

export const DEFAULT_UI_PORT = 8081;

export interface UiCommandOptions {
  uiPort: number;
  follow?: boolean;
}

/** `mcp-wiretap ui`; its code (serve-logs.ts) is loaded only when it runs. */
export function registerUiCommand(program: Command): void {
  program
    .command("ui")
    .argument("<paths...>", "NDJSON logs, or folders (every *.ndjson in them, rotated files included)")
    .description("serve the web UI over saved logs (loopback only; the URL printed holds its token)")
    .addOption(new Option("--ui-port <port>", "port to serve on (0: any free port)").default(DEFAULT_UI_PORT).argParser(parsePort))
    .option("-f, --follow", "keep reading as the logs grow, like tail -F")
    .action(async (paths: string[], o: UiCommandOptions) => {
      await (await import("./serve-logs.js")).uiCommand(paths, o);
    });
}
