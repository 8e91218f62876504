import os from "node:os";
import { checkText } from "../analysis/check-report.js";
import { DEFAULT_FAIL_ON, type Condition } from "../analysis/conditions.js";
import { runCheck } from "../analysis/check-run.js";
import { junitXml } from "../analysis/junit.js";
import { loadLogs } from "../analysis/read-logs.js";
import { writeReport } from "../analysis/write-report.js";
import { defaultIo, noteTo, type AnalysisIo } from "./stats-command.js";
import { VERSION } from "../util/package-info.js";
import { FileReadError } from "../saved-logs/follow.js";

export interface CheckCommandOptions {
  failOn?: Condition[];
  expectTool?: string[];
  forbidTool?: string[];
  maxLatency?: number;
  maxListTokens?: number;
  maxResultTokens?: number;
  format?: "text" | "junit" | "sarif";
  output?: string;
}

/** Exit codes: 0 nothing found, 1 a condition holds, 2 bad usage or an unreadable input. */
export const CHECK_EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export async function checkCommand(files: string[], o: CheckCommandOptions, io: AnalysisIo = defaultIo()): Promise<number> {
  let logs;
  try {
    logs = await loadLogs(files, io.stdin, { verifyChain: true, onNote: noteTo(io.stderr) });
  } catch (err) {
    if (err instanceof FileReadError || (err as Error).name === "UsageError") {
      io.stderr.write(`mcp-wiretap: ${(err as Error).message}\n`);
      return CHECK_EXIT.usage;
    }
    throw err;
  }
  // A gate must not pass on an input that is not a log at all (a wrong path, a recording that never started).
  const empty = logs.sources.find((s) => s.records === 0);
  if (empty) {
    const n = empty.unreadable.length;
    io.stderr.write(`mcp-wiretap: ${empty.name} holds no mcp-wiretap record (${n} line${n === 1 ? "" : "s"} skipped)\n`);
    return CHECK_EXIT.usage;
  }
  const failOn = o.failOn ?? [...DEFAULT_FAIL_ON];
  const { findings, checked } = await runCheck(logs, { failOn, expectTools: o.expectTool, forbidTools: o.forbidTool, maxLatencyMs: o.maxLatency, maxListTokens: o.maxListTokens, maxResultTokens: o.maxResultTokens });
  const report =
    o.format === "junit"
      ? junitXml(logs.records, findings, checked, os.hostname())
      : o.format === "sarif"
        ? (await import("../analysis/sarif.js")).sarifReport(findings, checked, logs, VERSION)
        : checkText(findings, checked, logs.records.length);
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
