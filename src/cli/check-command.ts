import os from "node:os";
import { type Command, InvalidArgumentError, Option } from "commander";
import { buildCalls } from "../analysis/calls.js";
import { checkText } from "../analysis/check-report.js";
import { CONDITIONS, DEFAULT_FAIL_ON, findConditions, type Condition } from "../analysis/conditions.js";
import { junitXml } from "../analysis/junit.js";
import { loadLogs } from "../analysis/read-logs.js";
import { writeReport } from "../analysis/write-report.js";
import { collect } from "./option-parsers.js";
import { defaultIo, type AnalysisIo } from "./stats-command.js";
import { splitList } from "./tail/filters.js";
import { FileReadError } from "./tail/follow.js";

export interface CheckCommandOptions {
  failOn?: Condition[];
  expectTool?: string[];
  forbidTool?: string[];
  maxLatency?: number;
  format?: "text" | "junit";
  output?: string;
}

/** Exit codes: 0 nothing found, 1 a condition holds, 2 bad usage or an unreadable input. */
export const CHECK_EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export function registerCheckCommand(program: Command): void {
  program
    .command("check")
    .argument("[files...]", "NDJSON logs or folders of them (none or -: stdin)")
    .description("gate CI on a recorded run: exit 1 when a condition holds (errors, denials, drift, …), 0 otherwise, 2 on bad usage")
    .addOption(new Option("--fail-on <list>", `conditions, comma-separated: ${CONDITIONS.join(", ")} (or all); default ${DEFAULT_FAIL_ON.join(",")}`).argParser(parseFailOn))
    .option("--expect-tool <name>", "fail unless this tool (glob) was called; repeatable", collect)
    .option("--forbid-tool <name>", "fail when this tool (glob) was called; repeatable", collect)
    .addOption(new Option("--max-latency <ms>", "fail on any answer slower than this").argParser(parseMs))
    .addOption(new Option("--format <format>", "report format").choices(["text", "junit"]).default("text"))
    .option("-o, --output <file>", "write the report to this file (created 0600) instead of stdout")
    .action(async (files: string[], o: CheckCommandOptions) => {
      process.exitCode = await checkCommand(files, o);
    });
}

export async function checkCommand(files: string[], o: CheckCommandOptions, io: AnalysisIo = defaultIo()): Promise<number> {
  let logs;
  try {
    logs = await loadLogs(files, io.stdin, { verifyChain: true });
  } catch (err) {
    if (err instanceof FileReadError || (err as Error).name === "UsageError") {
      io.stderr.write(`mcp-wiretap: ${(err as Error).message}\n`);
      return CHECK_EXIT.usage;
    }
    throw err;
  }
  const failOn = o.failOn ?? [...DEFAULT_FAIL_ON];
  const options = {
    failOn,
    expectTools: splitList(o.expectTool),
    forbidTools: splitList(o.forbidTool),
    ...(o.maxLatency !== undefined ? { maxLatencyMs: o.maxLatency } : {}),
  };
  const findings = findConditions(logs, buildCalls(logs.records), options);
  const checked: string[] = [...failOn];
  if (options.expectTools.length > 0) checked.push("expect-tool");
  if (options.forbidTools.length > 0) checked.push("forbid-tool");
  if (options.maxLatencyMs !== undefined) checked.push("latency");
  const report = o.format === "junit" ? junitXml(logs.records, findings, checked, os.hostname()) : checkText(findings, checked, logs.records.length);
  if (o.output === undefined || o.output === "-") {
    io.stdout.write(report);
  } else {
    try {
      await writeReport(o.output, report);
    } catch (err) {
      io.stderr.write(`mcp-wiretap: cannot write ${o.output}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}\n`);
      return CHECK_EXIT.usage;
    }
    // The verdict stays visible in the CI log when the report goes to a file.
    io.stderr.write(findings.length === 0 ? "mcp-wiretap check: ok\n" : `mcp-wiretap check: FAILED: ${findings.length} finding(s), see ${o.output}\n`);
  }
  return findings.length === 0 ? CHECK_EXIT.ok : CHECK_EXIT.failed;
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
