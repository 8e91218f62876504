import { Option, type Command } from "commander";
import { DEFAULT_UI_PORT, type UiCommandOptions } from "../ui/server/ui-options.js";
import { collect, parsePort } from "./option-parsers.js";
import { caDirOption } from "./proxy-options.js";

/** `mcp-wiretap ui`; its code (serve-logs.ts) is loaded only when it runs. */
export function registerUiCommand(program: Command): void {
  program
    .command("ui")
    .argument("[paths...]", "NDJSON logs, or folders (every *.ndjson in them, rotated files included); none: the logs of `mcp-wiretap stdio`, followed")
    .description("serve the web UI over saved logs (loopback only; the URL printed holds its token)")
    .addOption(new Option("--ui-port <port>", "port to serve on (0: any free port)").default(DEFAULT_UI_PORT).argParser(parsePort))
    .option("-f, --follow", "keep reading as the logs grow, like tail -F")
    .option("--allow-replay", "let the page replay a request (Replay, Edit and replay) as `replay` does; its records are appended to the log, which is followed", false)
    .option("--config <file>", "with --allow-replay: the policy replays go through; default: the shipped config/policy.yaml")
    .option("--upstream-ca <file>", "with --allow-replay: extra trusted root(s) for the server's TLS, PEM; repeatable", collect, [])
    .option("--insecure-upstream", "with --allow-replay: do not verify the server's certificate (its records say so)", false)
    .addOption(caDirOption())
    .action(async (paths: string[], o: UiCommandOptions) => {
      await (await import("../ui/server/serve-logs.js")).uiCommand(paths, o);
    });
}
