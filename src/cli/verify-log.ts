import { readFileSync } from "node:fs";
import { verifyChain } from "../log/audit-chain.js";

/** `mcp-wiretap verify-log FILE…`: checks the audit chain; exit 1 when anything was changed. */
export function verifyLogCommand(files: string[], opts: { json?: boolean }): void {
  const report = verifyChain(files.map((name) => ({ name, text: readFileSync(name, "utf8") })));
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else if (report.problems.length === 0) {
    process.stdout.write(`ok: ${report.records} records, chain intact${report.endedCleanly ? ", ended with a stop record" : ", no stop record at the end (still running, or cut short)"}\n`);
  } else {
    const lines = report.problems.map((p) => `${p.file}:${p.line}${p.seq !== null ? ` (seq ${p.seq})` : ""}: ${p.problem}`);
    process.stdout.write(`${lines.join("\n")}\nFAILED: ${report.problems.length} problem(s) in ${report.records} records\n`);
  }
  if (report.problems.length > 0) process.exitCode = 1;
}
