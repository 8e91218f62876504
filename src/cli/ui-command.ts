import { Option, type Command } from "commander";
import { DEFAULT_UI_PORT, type UiCommandOptions } from "../ui/server/ui-options.js";
import { parsePort } from "./option-parsers.js";

/** `mcp-wiretap ui`; its code (serve-logs.ts) is loaded only when it runs. */
export function registerUiCommand(program: Command): void {
  program
    .command("ui")
    .argument("[paths...]", "NDJSON logs, or folders (every *.ndjson in them, rotated files included); none: the logs of `mcp-wiretap stdio`, followed")
    .description("serve the web UI over saved logs (loopback only; the URL printed holds its token)")
    .addOption(new Option("--ui-port <port>", "port to serve on (0: any free port)").default(DEFAULT_UI_PORT).argParser(parsePort))
    .option("-f, --follow", "keep reading as the logs grow, like tail -F")
    .action(async (paths: string[], o: UiCommandOptions) => {
      await (await import("../ui/server/serve-logs.js")).uiCommand(paths, o);
    });
}
