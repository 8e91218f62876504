/** Runs a built command line: how a failure becomes a message and an exit code. */
import net from "node:net";
import { type Command, CommanderError } from "commander";
import { UsageError } from "../util/usage-error.js";

/** Exit codes: 0 ok, 1 runtime failure, 2 bad usage or configuration. */
const USAGE = 2;

export async function runProgram(program: Command, argv: string[]): Promise<void> {
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exit(err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.exitCode === 0 ? 0 : USAGE);
    }
    if (err instanceof UsageError) {
      process.stderr.write(`mcp-wiretap: ${err.message}\n`);
      process.exit(USAGE);
    }
    const e = err as NodeJS.ErrnoException;
    if (e.code === "EADDRINUSE" || e.code === "EACCES" || e.code === "EADDRNOTAVAIL") {
      process.stderr.write(`mcp-wiretap: cannot listen: ${e.message}\n${await listenAdvice(e as ListenError)}\n`);
      process.exit(1);
    }
    process.stderr.write(`mcp-wiretap: ${e.stack ?? String(err)}\n`);
    process.exit(1);
  }
}

type ListenError = NodeJS.ErrnoException & { port?: number; address?: string; flag?: string };

/** The next step after a failed listen, naming the option that chose the port and a port that is free now. */
async function listenAdvice(e: ListenError): Promise<string> {
  const port = typeof e.port === "number" ? e.port : undefined;
  const flag = e.flag ?? "--port";
  switch (e.code) {
    case "EADDRINUSE": {
      if (port === undefined) return `  the port is in use: pick another one (${flag} 0 picks any free port)`;
      const free = await freePortNear(port, e.address);
      return `  port ${port} is in use (another mcp-wiretap?): stop what uses it, or pick another port: ${free === null ? "" : `${flag} ${free} (free now), or `}${flag} 0 for any free port`;
    }
    case "EACCES":
      return `  this port needs privileges (ports below 1024 on most systems): use ${flag} 8080, or ${flag} 0 for any free port`;
    default:
      return `  ${e.address ?? "the --host address"} is not an address of this machine: use --host 127.0.0.1`;
  }
}

/** The first of the next few ports that can be listened on now, or null. */
async function freePortNear(port: number, host = "127.0.0.1"): Promise<number | null> {
  for (let candidate = port + 1; candidate <= Math.min(port + 20, 65535); candidate++) {
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once("error", () => resolve(false));
      probe.listen(candidate, host, () => probe.close(() => resolve(true)));
    });
    if (free) return candidate;
  }
  return null;
}
