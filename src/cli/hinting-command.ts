import { Command } from "commander";

const RUN_USAGE = "mcp-wiretap run [options] -- <command> [args...]";

/**
 * commander's Command with better hints for unknown options. commander suggests the option with the
 * smallest edit distance, so `--log` gets `--keylog`; an option the flag is the start of (`--log-file`) is
 * what a user who types `--log` wants. Under `run`, an unknown option is most likely the command's own.
 */
export class HintingCommand extends Command {
  override createCommand(name?: string): Command {
    return new HintingCommand(name);
  }

  /** Replaces commander's (internal, untyped) `unknownOption`, called for each option it does not know. */
  unknownOption(flag: string): void {
    // Positional options (for `run`) keep the program's own options off its subcommands: `start --version`
    // still prints the version.
    let root: Command = this;
    while (root.parent) root = root.parent;
    const programOption = root === this ? undefined : root.options.find((o) => o.short === flag || o.long === flag);
    if (programOption) {
      // commander handles its own options on 'option:<name>' events (the version one prints and exits).
      (root as unknown as NodeJS.EventEmitter).emit(`option:${programOption.name()}`);
      return;
    }
    const longer = flag.startsWith("--")
      ? this.options.map((o) => o.long).filter((long): long is string => long !== undefined && long.startsWith(`${flag}-`))
      : [];
    const forRun = this.name() === "run" ? `\n(if it is the command's, put -- before the command: ${RUN_USAGE})` : "";
    if (longer.length > 0) {
      const choices = longer.length === 1 ? longer[0] : `${longer.slice(0, -1).join(", ")} or ${longer.at(-1)}`;
      this.error(`error: unknown option '${flag}'\n(Did you mean ${choices}?)${forRun}`, { code: "commander.unknownOption" });
    }
    if (forRun) this.error(`error: unknown option '${flag}'${forRun}`, { code: "commander.unknownOption" });
    (Command.prototype as unknown as { unknownOption(this: Command, flag: string): void }).unknownOption.call(this, flag);
  }
}
