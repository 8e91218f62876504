/**
 * `mcp-wiretap run [proxy options] [--proxy URL] -- CMD ARGS…`: runs a client with everything set to go
 * through the proxy and trust its CA (see client-env.ts), and the proxy for the command's lifetime.
 *
 * - Embedded proxy (default): `start`'s options, on a free loopback port unless --port says otherwise. Its
 *   records go to --log-file, or else to stderr: the command's stdout stays its own (a stdio MCP server or
 *   bridge speaks JSON-RPC there). It stops, and its records are flushed, after the command exits.
 * - `--proxy URL`: attach to a running proxy; the CA comes from --ca-dir, which must be the one that proxy
 *   signs with (checked through its /healthz before the command starts).
 * - Exit code: the command's; 128+n if a signal n ended it; 127 if it cannot be found, 126 if it cannot be
 *   executed. SIGTERM, SIGHUP and SIGINT are passed on to the command, which decides when to stop (SIGINT
 *   not when stdin is a terminal: Ctrl-C reaches the command directly, and twice would be one too many).
 * - With --proxy, credentials from --proxy-auth / MCP_WIRETAP_PROXY_AUTH go into the URL if it has none.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { exitStatus } from "../util/exit-status.js";
import { Option, type Command } from "commander";
import { applySettings, clientSettings, parseProxyUrl, proxyUrlFor, withCredentials } from "./client-env.js";
import { addProxyOptions, toStartOptions } from "./proxy-options.js";
import type { RunningProxy } from "./start.js";
import { redactUserinfo } from "../log/redact.js";
import { UsageError } from "../util/usage-error.js";

const FORWARDED_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

export function registerRunCommand(program: Command): Command {
  const cmd = program
    .command("run")
    .description("run a command (an MCP client) through the proxy, with its proxy and CA settings made for it")
    .argument("<command...>", "the command and its arguments; put -- before it")
    .usage("[options] -- <command> [args...]")
    .passThroughOptions(); // `run python3 -c CODE`: options after the command are the command's
  addProxyOptions(cmd, { port: 0 });
  // Everything `start` has but --ca-dir (the CA to trust) and --proxy-auth (credentials to use) configures
  // the embedded proxy only.
  const embeddedOnly = cmd.options.map((opt) => opt.attributeName()).filter((name) => name !== "caDir" && name !== "proxyAuth");
  const logFile = cmd.options.find((opt) => opt.long === "--log-file");
  if (logFile) logFile.description = "write log records to this file (created 0600) instead of stderr";
  cmd
    .addOption(new Option("--proxy <url>", "use the proxy already running at this URL instead of starting one").argParser(parseProxyUrl))
    .option("--no-preload", "do not add the Node 20/22 proxy preload to NODE_OPTIONS")
    .addHelpText(
      "after",
      [
        "",
        "The command gets HTTPS_PROXY/HTTP_PROXY (and lower-case), NO_PROXY without loopback entries,",
        "NODE_USE_ENV_PROXY=1, NODE_EXTRA_CA_CERTS, SSL_CERT_FILE/REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE and,",
        "for Node versions without NODE_USE_ENV_PROXY, a preload in NODE_OPTIONS (a no-op on Node 24.5+).",
        "Records go to --log-file, or stderr: the command's stdout is left alone.",
        "Exit code: the command's (128+n for signal n; 127 if it is not found).",
        "",
        "Examples:",
        "  mcp-wiretap run --log-file mcp.ndjson -- npx -y mcp-remote https://mcp.example.com/mcp --enable-proxy",
        "  mcp-wiretap run --proxy http://127.0.0.1:8080 -- python client.py",
      ].join("\n"),
    )
    .action(async (command: string[], o: Record<string, unknown>, self: Command) => runCommand(command, o, self, embeddedOnly));
  return cmd;
}

/** Resolves once everything written to stderr so far has left the process (bounded). */
function drainStderr(timeoutMs = 2000): Promise<void> {
  if (!process.stderr.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    process.stderr.once("drain", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

interface Launched {
  child: ChildProcess;
  exited: Promise<number>;
}

/** Spawns the command; resolves its exit code (127/126 when it cannot be started, with a message). */
function launch(file: string, args: string[], env: NodeJS.ProcessEnv): Launched {
  let child: ChildProcess;
  try {
    child = spawn(file, args, { stdio: "inherit", env });
  } catch (err) {
    throw new UsageError(`cannot run ${file}: ${(err as Error).message}`);
  }
  const exited = new Promise<number>((resolve) => {
    child.on("error", (err: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // started; an error from kill() later is not fatal
      if (err.code === "ENOENT") {
        process.stderr.write(`mcp-wiretap: cannot run ${file}: command not found\n`);
        resolve(127);
      } else {
        process.stderr.write(`mcp-wiretap: cannot run ${file}: ${err.message}\n`);
        resolve(err.code === "EACCES" ? 126 : 127);
      }
    });
    child.once("exit", (code, signal) => resolve(exitStatus(code, signal)));
  });
  return { child, exited };
}

/**
 * The CA of a proxy run did not start (--proxy): the one in --ca-dir, checked against what that proxy signs
 * with before the command starts (a client would fail later with ECONNREFUSED or an unknown-CA error).
 */
async function attachedCa(caDir: string, attachTo: string): Promise<{ certPath: string; bundlePath: string }> {
  const [{ holdsCa, loadOrCreateCa }, { judgeAttachment, probeProxy }] = await Promise.all([import("../ca/index.js"), import("../attach/running-proxy.js")]);
  if (!holdsCa(caDir)) throw new UsageError(`${path.resolve(caDir)} holds no CA (ca.pem): give --ca-dir the folder the proxy at ${redactUserinfo(attachTo)} was started with`);
  const ca = await loadOrCreateCa(caDir);
  const probe = await probeProxy(attachTo);
  const verdict = judgeAttachment(attachTo, probe, { certPath: ca.certPath, fingerprint256: ca.info().fingerprint256 });
  if (!verdict.ok) {
    const advice = probe.answered ? "give --ca-dir the folder that proxy was started with" : "start it first (mcp-wiretap start), or leave out --proxy and run starts its own";
    throw new UsageError(`${verdict.message}; ${advice}`);
  }
  process.stderr.write(`mcp-wiretap: ${verdict.message}\n`);
  return ca;
}

export async function runCommand(command: string[], o: Record<string, unknown>, cmd: Command, embeddedOnly: string[] = []): Promise<never> {
  const [file, ...args] = command;
  if (!file) throw new UsageError("run needs a command: mcp-wiretap run [options] -- <command> [args...]");
  const attachTo = o.proxy as string | undefined;
  const startOptions = toStartOptions(o);
  let proxy: RunningProxy | null = null;
  let proxyUrl: string;
  if (attachTo) {
    const misplaced = embeddedOnly.filter((key) => cmd.getOptionValueSource(key) === "cli");
    if (misplaced.length > 0) {
      const flags = misplaced.map((key) => cmd.options.find((opt) => opt.attributeName() === key)?.long ?? key);
      throw new UsageError(`${flags.join(", ")} configure the proxy run starts itself; with --proxy they have no effect`);
    }
    proxyUrl = withCredentials(attachTo, startOptions.proxyAuth);
  } else {
    const { startProxy } = await import("./start.js");
    proxy = await startProxy({ ...startOptions, logFd: 2, clientHint: false });
    proxyUrl = proxyUrlFor(proxy.address, startOptions.proxyAuth);
  }
  const ca = proxy ? { certPath: proxy.caCertPath, bundlePath: proxy.caBundlePath } : await attachedCa(startOptions.caDir, attachTo!);
  const settings = clientSettings(
    { proxyUrl, caCertPath: ca.certPath, bundlePath: ca.bundlePath, preload: o.preload !== false },
    process.env,
  );
  const env = applySettings(process.env, settings);

  let launched: Launched;
  try {
    launched = launch(file, args, env);
  } catch (err) {
    await proxy?.stop("command could not be started");
    throw err;
  }
  const forward = (signal: NodeJS.Signals): void => {
    // Ctrl-C in a terminal already reached the command: it is in our foreground process group.
    if (signal === "SIGINT" && process.stdin.isTTY) return;
    if (launched.child.exitCode === null && launched.child.signalCode === null) launched.child.kill(signal);
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  const code = await launched.exited;
  if (proxy) await proxy.stop(launched.child.pid === undefined ? "command could not be started" : "command exited");
  await drainStderr();
  process.exit(code);
}
