import { Option } from "commander";
import { newestLaunchLog, stdioLogFolder } from "../stdio/log-folder.js";
import { UsageError } from "../util/usage-error.js";

/** `--stdio-logs` of `tail` and `export`: read the newest launch log of `mcp-wiretap stdio`. */
export function stdioLogsOption(): Option {
  return new Option("--stdio-logs", "read the newest log `mcp-wiretap stdio` wrote in $XDG_STATE_HOME/mcp-wiretap/ (instead of FILE)");
}

/** The file to read: FILE as given, or with --stdio-logs the newest launch log (a usage error when there is none). */
export function inputFile(file: string | undefined, o: { stdioLogs?: boolean }, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!o.stdioLogs) return file;
  if (file !== undefined) throw new UsageError("give either FILE or --stdio-logs, not both");
  const dir = stdioLogFolder(env);
  const newest = newestLaunchLog(dir);
  if (!newest) throw new UsageError(`--stdio-logs: no log in ${dir} yet (mcp-wiretap stdio writes one per launch)`);
  return newest;
}
