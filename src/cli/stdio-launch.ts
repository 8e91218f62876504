import path from "node:path";
import { ensureLogFolder, stdioLogFolder } from "../stdio/log-folder.js";
import { ensurePrivateDir } from "../util/private-file.js";
import { UsageError } from "../util/usage-error.js";
import { interceptOf } from "./proxy-options.js";
import { startServer, takeEarlyServer } from "./stdio-early.js";
import type { StdioOptions } from "./stdio-command.js";

/**
 * `mcp-wiretap stdio -- CMD ARGS…`: resolves with the exit code once CMD has exited and records are written.
 *
 * What a client waits for is the server's first answer, so the server starts first, most often before the
 * command line was even parsed (stdio-early.ts); this module loads nothing but what checks the options, and
 * the policy, the pipeline and the log sink (stdio-session.ts) load while the server boots. Until the relay joins them the server is given nothing
 * and nothing it writes is judged or passed on: its bytes and the client's wait in their pipes (the server's
 * also in its stream's buffer, up to the high-water mark), bounded either way.
 */
export async function stdioCommand(argv: string[], o: StdioOptions): Promise<number> {
  const [command, ...args] = argv;
  if (!command) throw new UsageError("stdio: no command given (mcp-wiretap stdio [options] -- <command> [args...])");
  if (o.onLogError === "block") {
    throw new UsageError("stdio: --on-log-error block is not available here yet (records that cannot be written are reported on stderr and counted in the stop record)");
  }
  const label = o.name ?? path.basename(command).replace(/\.(exe|cmd|bat)$/i, "");
  const interceptSettings = interceptOf(o);
  const pinsDir = pinFolder(o.caDir);
  // Signals reach the server from the moment it runs, while the session still loads.
  const spawned = takeEarlyServer(command, args) ?? startServer(command, args);
  try {
    const { relayLaunch } = await import("./stdio-session.js");
    return await relayLaunch(spawned, { command, args, label, pinsDir, interceptSettings }, o);
  } catch (err) {
    // A launch that cannot go on (a bad policy file, a log file we may not write): the server is stopped.
    spawned.child.kill();
    throw err;
  }
}

/**
 * The folder of pins.json (written on the first tools/list), private as the CA's is: --ca-dir, else the
 * per-user folder the launch logs go to. Never the package's certs/: a global install's is root's, and one
 * shared by every user would let one user's pins judge another's servers.
 */
function pinFolder(caDir: string | undefined): string {
  if (caDir === undefined) {
    const dir = stdioLogFolder();
    ensureLogFolder(dir);
    return dir;
  }
  const dir = path.resolve(caDir);
  try {
    ensurePrivateDir(dir, "--ca-dir");
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--ca-dir ${dir}: cannot create it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  return dir;
}
