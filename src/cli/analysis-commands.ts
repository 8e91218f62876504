import { type Command, InvalidArgumentError, Option } from "commander";
import { CONDITIONS, DEFAULT_FAIL_ON, GROUP_BY, type Condition } from "../analysis/names.js";
import type { CheckCommandOptions } from "./check-command.js";
import type { DiffCommandOptions } from "./diff-command.js";
import { collect } from "./option-parsers.js";
import type { StatsOptions } from "./stats-command.js";
import { addFilterOptions } from "./tail/command.js";
import { splitList } from "../saved-logs/filters.js";

/** `stats`, `check` and `diff`: their code is loaded only when one of them runs. */
export function registerAnalysisCommands(program: Command): void {
  const stats = program
    .command("stats")
    .argument("[files...]", "NDJSON logs or folders of them (none or -: stdin); rotated files are read oldest first")
    .description("per tool (method, server or session): calls, errors, denials, latency percentiles, bytes")
    .addOption(new Option("--by <group>", "group calls by").choices(GROUP_BY).default("tool"))
    .option("--json", "as JSON (stable; see docs/analysis.md)")
    .option("--tokens", "add token estimates (o200k_base): each tool definition, each tools/list, mean/p95 result tokens per tool");
  addFilterOptions(stats).action(async (files: string[], o: StatsOptions) => {
    process.exitCode = await (await import("./stats-command.js")).statsCommand(files, o);
  });

  program
    .command("check")
    .argument("[files...]", "NDJSON logs or folders of them (none or -: stdin)")
    .description("gate CI on a recorded run: exit 1 when a condition holds (errors, denials, drift, …), 0 otherwise, 2 on bad usage")
    .addOption(new Option("--fail-on <list>", `conditions, comma-separated: ${CONDITIONS.join(", ")} (or all); default ${DEFAULT_FAIL_ON.join(",")}`).argParser(parseFailOn))
    .option("--expect-tool <name>", "fail unless this tool (glob) was called; repeatable", collect)
    .option("--forbid-tool <name>", "fail when this tool (glob) was called; repeatable", collect)
    .addOption(new Option("--max-latency <ms>", "fail on any answer slower than this").argParser(parseMs))
    .addOption(new Option("--max-list-tokens <n>", "fail when a server's tools/list is estimated at more tokens than this (o200k_base)").argParser(parseCount))
    .addOption(new Option("--max-result-tokens <n>", "fail on any tool result estimated at more tokens than this (o200k_base)").argParser(parseCount))
    .addOption(new Option("--format <format>", "report format (sarif: SARIF 2.1.0 for code-scanning views)").choices(["text", "junit", "sarif"]).default("text"))
    .option("-o, --output <file>", "write the report to this file (created 0600) instead of stdout")
    .action(async (files: string[], o: CheckCommandOptions) => {
      process.exitCode = await (await import("./check-command.js")).checkCommand(files, o);
    });

  program
    .command("diff")
    .argument("<a>", "the earlier run: a log file or a folder of them")
    .argument("<b>", "the later run: a log file or a folder of them")
    .description("what changed between two recorded runs: tools added, removed or redefined; call outcomes; latency")
    .option("--exit-code", "exit 1 when B regressed (a tool removed or redefined, a worse outcome, slower), 0 otherwise")
    .addOption(new Option("--latency-ratio <r>", "a median this many times slower or faster is a shift").argParser(parseRatio).default(2))
    .addOption(new Option("--latency-min <ms>", "…and moved by at least this many ms").argParser(parseMs).default(100))
    .option("--json", "as JSON (see docs/analysis.md)")
    .action(async (a: string, b: string, o: DiffCommandOptions) => {
      process.exitCode = await (await import("./diff-command.js")).diffCommand(a, b, o);
    });
}

function parseFailOn(value: string, previous: Condition[] | undefined): Condition[] {
  const values = splitList([value]).map((v) => v.toLowerCase());
  if (values.includes("all")) return [...CONDITIONS];
  for (const v of values) {
    if (!(CONDITIONS as readonly string[]).includes(v)) throw new InvalidArgumentError(`unknown condition ${JSON.stringify(v)}: use ${CONDITIONS.join(", ")} or all.`);
  }
  // A repeated --fail-on adds to the list given before.
  return [...new Set([...(previous ?? []), ...(values as Condition[])])];
}

function parseMs(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError("must be a whole number of milliseconds.");
  return Number(value);
}

function parseCount(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError("must be a whole number of tokens.");
  return Number(value);
}

function parseRatio(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 1)) throw new InvalidArgumentError("must be a number above 1 (2 = twice as slow).");
  return n;
}
