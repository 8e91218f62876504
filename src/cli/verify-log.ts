import { closeSync, constants, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { readAuditKey, readChainState, statePathFor, AUDIT_KEY_FILE } from "../log/audit-state.js";
import { findStateOfChain, readStateCopy } from "../log/audit-state-lookup.js";
import { verifyChain, type ChainReport } from "../log/audit-verify.js";
import { symlinkMessage } from "../util/private-file.js";
import { UsageError } from "../util/usage-error.js";

/** verify-log's exit codes (README: "Checking a log"). A usage error (a file that cannot be read) is 2. */
export const VERIFY_EXIT = { ok: 0, problems: 1, unkeyed: 3, incomplete: 4 } as const;

export interface VerifyLogOptions {
  json?: boolean;
  caDir: string;
  /** Where the audit key and states are; default `<caDir>/audit`. */
  auditDir?: string;
  /** The audit state to compare the end with (a copy carried along with the log). */
  state?: string;
}

/**
 * `mcp-wiretap verify-log FILE…`: checks the chain, the MAC of every record with the audit key, and the
 * end of the log against its audit state (found by the log's path, else by the chain's identity, or given
 * with --state). Exit 0: intact, authenticated and ending where its state says; 1: a problem was found; 3:
 * no problem found but no key either, so only the unkeyed hashes were checked; 4: intact and authenticated,
 * but no audit state, so whether its end was cut could not be checked.
 */
export function verifyLogCommand(files: string[], opts: VerifyLogOptions): void {
  const auditDir = path.resolve(opts.auditDir ?? path.join(opts.caDir, "audit"));
  const keys = readAuditKey(auditDir);
  const texts = files.map((name) => ({ name, text: readLog(name) }));
  const report = verifyChain(texts, {
    keys,
    ...(keys
      ? opts.state !== undefined
        ? { givenState: readStateCopy(opts.state, keys) }
        : {
            stateLookup: (log: string) => readChainState(statePathFor(auditDir, log), keys),
            stateOfChain: (chain: string) => findStateOfChain(auditDir, chain, keys),
          }
      : {}),
  });
  const exit =
    report.problems.length > 0
      ? VERIFY_EXIT.problems
      : !report.authenticated
        ? VERIFY_EXIT.unkeyed
        : report.state === "none"
          ? VERIFY_EXIT.incomplete
          : VERIFY_EXIT.ok;
  if (opts.json) process.stdout.write(`${JSON.stringify({ ...report, exitCode: exit }, null, 2)}\n`);
  else process.stdout.write(describe(report, files.length, path.join(auditDir, AUDIT_KEY_FILE), keys !== null));
  process.exitCode = exit;
}

/** The log's text; a symbolic link is never followed (see src/saved-logs/log-inputs.ts). */
function readLog(name: string): string {
  let fd: number;
  try {
    fd = openSync(name, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "EMLINK") throw new UsageError(symlinkMessage("the log", name));
    throw new UsageError(`missing file: cannot read ${name} (${code ?? String(error)})`);
  }
  try {
    return readFileSync(fd, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${name} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  } finally {
    closeSync(fd);
  }
}

function describe(report: ChainReport, fileCount: number, keyFile: string, hadKey: boolean): string {
  const notes = report.notes.map((n) => `note: ${n}\n`).join("");
  if (report.problems.length > 0) {
    const lines = report.problems.map((p) => `${p.file}:${p.line}${p.seq !== null ? ` (seq ${p.seq})` : ""}: ${p.problem}\n`);
    return `${lines.join("")}${notes}FAILED: ${report.problems.length} problem(s) in ${report.records} records\n`;
  }
  const files = fileCount === 1 ? "" : ` in ${fileCount} files`;
  const end = report.endedCleanly ? "ended with a stop record" : "no stop record at the end (still running, stopped abruptly, or cut short)";
  if (!report.authenticated) {
    const why = hadKey ? "its records carry no MAC" : `no audit key at ${keyFile} (give --audit-dir or --ca-dir)`;
    return (
      `${notes}UNVERIFIED: ${report.records} records${files}, hashes intact, ${end}; but only the unkeyed integrity ` +
      `was checked (${why}): anyone who could write the file could have cut it or rewritten it consistently\n`
    );
  }
  if (report.state === "none") {
    return (
      `${notes}INCOMPLETE: ${report.records} records${files}, chain intact, every record authenticated with the audit key; ` +
      `whether records were cut from the end could not be checked: no audit state (give --state FILE, or --audit-dir ` +
      `with the states of the machine that wrote it), ${end}\n`
    );
  }
  // "differs" always comes with a problem: matched or behind here.
  const state = report.state === "matched" ? `ends where the audit state says (seq ${report.last?.seq})` : "goes on past the audit state's last checkpoint";
  return `${notes}ok: ${report.records} records${files}, chain intact, every record authenticated with the audit key, ${state}, ${end}\n`;
}
