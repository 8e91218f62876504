import type { Command } from "commander";
import { useColor } from "../saved-logs/color.js";

export function registerDemoCommand(program: Command): Command {
  return program
    .command("demo")
    .description("watch it work: a scripted MCP session through the proxy over HTTPS and stdio (offline, loopback only)")
    .option("--log-dir <dir>", "where the demo's two logs go (default: the per-user folder of stdio logs)")
    .addHelpText(
      "after",
      [
        "",
        "The demo's own client and server: a tool call with progress, a token in an argument (redacted in the",
        "records), a tool description that tells the model to read a private key (flagged), and a call the",
        "demo's policy denies (enforce mode). Records are printed as `tail -v` shows them; on a terminal the UI",
        "stays up until Enter. It leaves only the two logs it names.",
      ].join("\n"),
    )
    .action(async (o: { logDir?: string }) => {
      const { runDemo } = await import("../demo/run-demo.js");
      // On a terminal the UI stays up until Enter or Ctrl-C; then the demo cleans up as after a run without it.
      const hold = process.stdin.isTTY
        ? () =>
            new Promise<void>((resolve) => {
              const done = (): void => {
                process.stdin.pause();
                process.off("SIGINT", done);
                resolve();
              };
              process.stdin.once("data", done);
              process.once("SIGINT", done);
            })
        : undefined;
      process.exitCode = await runDemo({ ...(o.logDir ? { logDir: o.logDir } : {}), color: useColor(process.env, process.stdout.isTTY === true), ...(hold ? { hold } : {}) }, (line) => process.stdout.write(`${line}\n`));
    });
}
