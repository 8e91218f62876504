/**
 * HintingCommand replaces commander's `unknownOption`, a method commander calls for every option it does not
 * know but does not document (there is no public hook for that message), and emits `option:<name>` on the
 * program, which is how commander runs its own options (`--version`). This pins both, in this process: an
 * upgrade of commander that renames, stops calling or changes either fails here, saying which.
 */
import { Command, CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { HintingCommand } from "../../src/cli/hinting-command.js";

/** A program like ours (positional options, errors thrown instead of exiting); what it writes is kept. */
function program() {
  const out: string[] = [];
  const err: string[] = [];
  const root = new HintingCommand("prog")
    .version("9.8.7", "-v, --version")
    .exitOverride()
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => err.push(s) });
  const start = root.command("start").option("--log-file <file>").option("--keylog <file>").action(() => {});
  start.exitOverride();
  root.command("run").passThroughOptions().argument("[command...]").option("--ca-dir <dir>").action(() => {});
  return { root, out, err };
}

function parseError(args: string[]): { error: CommanderError; err: string; out: string } {
  const { root, out, err } = program();
  try {
    root.parse(args, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return { error, err: err.join(""), out: out.join("") };
    throw error;
  }
  throw new Error(`parsing ${args.join(" ")} did not fail`);
}

describe("commander's unknownOption, as HintingCommand uses it", () => {
  it("exists on Command.prototype and takes the flag", () => {
    const unknownOption = (Command.prototype as unknown as { unknownOption?: unknown }).unknownOption;
    expect(typeof unknownOption, "commander no longer has Command.prototype.unknownOption: HintingCommand's hints are dead code").toBe("function");
    expect((unknownOption as (flag: string) => void).length).toBe(1);
  });

  it("is what commander calls for an unknown option, on the subcommand that parsed it", () => {
    const calls: [string, string][] = [];
    class Spy extends HintingCommand {
      override createCommand(name?: string): Command {
        return new Spy(name);
      }
      override unknownOption(flag: string): void {
        calls.push([this.name(), flag]);
        super.unknownOption(flag);
      }
    }
    const root = new Spy("prog").exitOverride().configureOutput({ writeErr: () => {} });
    root.command("start").option("--log-file <file>").exitOverride().action(() => {});
    expect(() => root.parse(["start", "--log", "x"], { from: "user" })).toThrow(CommanderError);
    expect(calls).toEqual([["start", "--log"]]);
  });

  it("our hint replaces commander's nearest-spelling one (--log: --log-file, not --keylog)", () => {
    const { error, err } = parseError(["start", "--log", "x"]);
    expect(error.code).toBe("commander.unknownOption");
    expect(err).toContain("error: unknown option '--log'\n(Did you mean --log-file?)");
    expect(err).not.toContain("--keylog");
  });

  it("falls back to commander's own message, with its suggestion, for anything else", () => {
    const { error, err } = parseError(["start", "--keylgo", "x"]);
    expect(error.code).toBe("commander.unknownOption");
    expect(err).toMatch(/error: unknown option '--keylgo'\n\(Did you mean --keylog\?\)/);
  });

  it("runs a program option given after a subcommand through commander's option:<name> event (`start --version`)", () => {
    const { error, out } = parseError(["start", "--version"]);
    expect(error.code).toBe("commander.version");
    expect(out).toBe("9.8.7\n");
  });
});
