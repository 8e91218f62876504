/**
 * The server of a `stdio` launch, started before the rest of the program is loaded (cli/main.ts): what a
 * client waits for is the server's first answer, and loading the command line's parser and checking the
 * options came before it, every launch. The command is read here as the words after the first `--`; the
 * command line is then parsed and checked as always, and the launch takes this server only when the parser
 * found the same command (cli/stdio-launch.ts). A command line that is refused (an unknown option, a bad
 * value) stops the server before it was given anything: it has read nothing of the client's, and nothing it
 * wrote was passed on.
 */
import { spawnServer, type SpawnedServer } from "../stdio/relay.js";

/** The compile cache, from this bundle's own code (cli/main.ts), once the server is started. */
export async function enableCompileCache(): Promise<void> {
  (await import("../startup/compile-cache.js")).enableCompileCache();
}

const FORWARDED_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Words the parser answers without running the command (help, version), and short flags, which combine: no early start. */
const ANSWERED_OR_SHORT = /^(--help|--version|-[^-].*)$/;

let early: { command: string; args: string[]; server: SpawnedServer } | null = null;

/** `argv`: process.argv of `mcp-wiretap stdio [options] -- CMD [ARGS…]`. */
export function startServerEarly(argv: readonly string[]): void {
  const words = argv.slice(3);
  const end = words.indexOf("--");
  if (end === -1 || words.slice(0, end).some((w) => ANSWERED_OR_SHORT.test(w))) return;
  const [command, ...args] = words.slice(end + 1);
  if (command === undefined || command === "") return;
  early = { command, args, server: startServer(command, args) };
  process.once("exit", stopUntaken);
}

function stopUntaken(): void {
  early?.server.child.kill();
  early = null;
}

/** The server started early for `command args`, if any; one started for another command is stopped. */
export function takeEarlyServer(command: string, args: readonly string[]): SpawnedServer | null {
  const taken = early;
  early = null;
  process.off("exit", stopUntaken);
  if (taken === null) return null;
  if (taken.command === command && taken.args.length === args.length && taken.args.every((a, i) => a === args[i])) return taken.server;
  taken.server.child.kill();
  return null;
}

/**
 * `spawnServer`, with SIGINT, SIGTERM and SIGHUP passed on to the server from its start to its exit: a client
 * that stops the launch early stops its server too, as it would a bare one.
 */
export function startServer(command: string, args: string[]): SpawnedServer {
  const spawned = spawnServer(command, args);
  const forward = (signal: NodeJS.Signals): void => void spawned.child.kill(signal);
  for (const s of FORWARDED_SIGNALS) process.on(s, forward);
  void spawned.outcome.then(() => {
    for (const s of FORWARDED_SIGNALS) process.off(s, forward);
  });
  return spawned;
}
