import { InvalidArgumentError, Option, type Command } from "commander";
import type { InterceptSettings } from "../intercept/create-interceptor.js";
import { parseInterceptFilter } from "../intercept/filter.js";
import { UsageError } from "../util/usage-error.js";
import { DEFAULT_MAX_PAYLOAD_BYTES, PAYLOAD_MODES, type PayloadMode } from "../log/payload-modes.js";
import { collect, parseFolder, parseListenHost, parsePort, parsePositiveInt, parseSize } from "./option-parsers.js";

const parseSizeOrZero = (value: string): number => (value.trim() === "0" ? 0 : parseSize(value));
import { DEFAULT_CA_DIR } from "../util/package-info.js";
import { DEFAULT_MAX_INSPECT_BYTES } from "../body/limits.js";
import { DEFAULT_MAX_INSPECT_MEMORY } from "../budget/inspect-budget.js";
import type { StartOptions } from "./start.js";
import { POLICY_MODES, type PolicyMode } from "../policy/modes.js";
import { DEFAULT_UI_PORT } from "../ui/server/ui-options.js";

/** `--mode`: overrides the policy file's `mode:` (start, run, stdio). */
export function modeOption(): Option {
  return new Option("--mode <mode>", "monitor (record, never block) or enforce (block what the policy denies); default: the policy file's mode:").choices(POLICY_MODES);
}

export function caDirOption(): Option {
  return new Option("--ca-dir <dir>", "folder of the CA (created 0700)").default(DEFAULT_CA_DIR, "the package's certs/").argParser(parseFolder);
}

/** Where records go: shared by `start`, `run` and `stdio`. */
export function addLogOptions(cmd: Command): Command {
  return cmd
    .option("--log-file <file>", "write log records to this file (created 0600) instead of stdout")
    .addOption(new Option("--log-max-size <size>", "rotate the log file past this size (e.g. 100M); 0 never").default(100 * 1024 * 1024, "100M").argParser(parseSizeOrZero))
    .addOption(new Option("--log-keep <n>", "rotated log files kept").default(5).argParser(parsePositiveInt))
    .option("--audit-chain", "chain and seal every record (seq, prevHash, mac) so edits, forgeries and cuts show; check with verify-log", false)
    .option("--audit-dir <dir>", "folder of the --audit-chain key and state (default: audit/ in the CA folder)")
    .addOption(new Option("--on-log-error <what>", "when records cannot be written: pass traffic (loud error) or block it").choices(["pass", "block"]).default("pass"));
}

/** How much of each message is inspected and logged: shared by `start`, `run` and `stdio`. */
export function addPayloadOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option("--payloads <mode>", "how much of each message to log").choices(PAYLOAD_MODES).default("truncated"))
    .addOption(
      new Option("--max-payload-bytes <n>", "payloads larger than this are truncated (with size and sha256)")
        .default(DEFAULT_MAX_PAYLOAD_BYTES)
        .argParser(parsePositiveInt),
    )
    .addOption(
      new Option("--max-inspect-bytes <n>", "largest body or SSE event decoded; larger ones are forwarded whole but not inspected (monitor mode); enforce mode refuses requests, MCP answers and SSE events that large")
        .default(DEFAULT_MAX_INSPECT_BYTES)
        .argParser(parsePositiveInt),
    );
}

/** The live web UI and what it acts on: shared by `start`, `run` and `stdio`. */
export function addUiOptions(cmd: Command): Command {
  return cmd
    .option("--ui", "serve the web UI on loopback (its URL, with a token, is printed on stderr)", false)
    .addOption(new Option("--ui-port <port>", "port of the web UI, implies --ui (0: any free port; default 8081)").argParser(parsePort))
    .option("--intercept <filter>", "hold each message tail's filter tokens select (e.g. 'tool:echo', 'method:tools/call dir:client') until it is forwarded, edited or dropped in the web UI; needs --ui")
    .addOption(new Option("--intercept-timeout <seconds>", "a held message not released in this time is dropped (its sender gets an error)").default(60).argParser(parseSeconds));
}

function parseSeconds(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0) || n > 86_400) throw new InvalidArgumentError("must be a number of seconds above 0 (at most 86400).");
  return n;
}

/** `--intercept` and its timeout; undefined without it. Held messages are released in the web UI: it needs one. */
export function interceptOf(o: { intercept?: unknown; interceptTimeout?: unknown; ui?: unknown; uiPort?: unknown }): InterceptSettings | undefined {
  if (typeof o.intercept !== "string") return undefined;
  if (uiPortOf(o) === undefined) throw new UsageError("--intercept holds messages until they are released in the web UI: add --ui (or --ui-port N)");
  // A filter that cannot be read is said before anything starts.
  parseInterceptFilter(o.intercept);
  return { filter: o.intercept, timeoutMs: Math.round(((o.interceptTimeout as number | undefined) ?? 60) * 1000) };
}

/** `--ui` / `--ui-port` as the port to serve on; undefined: no UI. */
export function uiPortOf(o: { ui?: unknown; uiPort?: unknown }): number | undefined {
  return o.ui || o.uiPort !== undefined ? ((o.uiPort as number | undefined) ?? DEFAULT_UI_PORT) : undefined;
}

/** The options of a running proxy, shared by `start` and `run`. */
export function addProxyOptions(cmd: Command, defaults: { port: number }): Command {
  cmd
    .addOption(new Option("--host <address>", "address to listen on").default("127.0.0.1").argParser(parseListenHost))
    .addOption(new Option("--port <port>", "port to listen on (0: any free port)").default(defaults.port).argParser(parsePort))
    .addOption(caDirOption());
  addLogOptions(cmd);
  cmd
    .option("--keylog <file>", "append TLS key-log lines (NSS format) for both legs, for Wireshark; default $SSLKEYLOGFILE")
    .option("--config <file>", "policy file (YAML); default: the shipped config/policy.yaml")
    .addOption(modeOption())
    .option("--upstream-ca <file>", "extra trusted root(s) for upstream TLS, PEM; repeatable", collect, [])
    .option("--insecure-upstream", "do not verify upstream certificates (every affected record says so)", false)
    .option("--passthrough <glob>", "tunnel matching hosts without decrypting them; repeatable", collect, [])
    .option(
      "--reverse <[local=]url>",
      "serve an upstream MCP server locally: URL on this port, /prefix=URL under a path, :port=URL on a port of its own; repeatable",
      collect,
      [],
    );
  addPayloadOptions(cmd);
  addUiOptions(cmd);
  return cmd
    .addOption(
      new Option("--proxy-auth <user:password>", "require HTTP Basic proxy credentials (needed to listen beyond loopback)").env(
        "MCP_WIRETAP_PROXY_AUTH",
      ),
    )
    .addOption(
      new Option("--connect-timeout <ms>", "how long a new upstream connection (TCP and TLS) may take before 502").default(30_000).argParser(parsePositiveInt),
    )
    .option("--otlp-endpoint <url>", "export spans and metrics over OTLP/HTTP to this base URL (default $OTEL_EXPORTER_OTLP_ENDPOINT)")
    .addOption(new Option("--otlp-protocol <protocol>", "OTLP encoding (default $OTEL_EXPORTER_OTLP_PROTOCOL or http/protobuf)").choices(["http/protobuf", "http/json"]))
    .option("--otlp-header <name=value>", "header sent with every OTLP export; repeatable (adds to $OTEL_EXPORTER_OTLP_HEADERS)", collect, [])
    .option("--otlp-payloads", "put redacted tool arguments and results on spans (off: never exported)", false)
    .addOption(new Option("--state <url>", "keep tool pins and rate-limit counters in Redis, shared by replicas (redis://HOST:PORT/DB)").env("MCP_WIRETAP_STATE_URL"))
    .addOption(
      new Option("--max-inspect-memory <size>", "memory all bodies and SSE events held for inspection may take (e.g. 256M), an eighth of it per client or server; past it monitor mode forwards uninspected, enforce mode refuses")
        .default(DEFAULT_MAX_INSPECT_MEMORY, "256M")
        .argParser(parseSize),
    )
    .addOption(new Option("--grace <ms>", "on SIGINT/SIGTERM, how long exchanges in flight may finish").default(2000).argParser(parsePort));
}

export function toStartOptions(o: Record<string, unknown>): StartOptions {
  return {
    host: o.host as string,
    port: o.port as number,
    caDir: o.caDir as string,
    logFile: o.logFile as string | undefined,
    config: o.config as string | undefined,
    ...(o.mode ? { mode: o.mode as PolicyMode } : {}),
    upstreamCa: o.upstreamCa as string[],
    insecureUpstream: o.insecureUpstream as boolean,
    passthrough: o.passthrough as string[],
    graceMs: o.grace as number,
    connectTimeoutMs: o.connectTimeout as number,
    payloads: o.payloads as PayloadMode,
    maxPayloadBytes: o.maxPayloadBytes as number,
    maxInspectBytes: o.maxInspectBytes as number,
    maxInspectMemory: o.maxInspectMemory as number,
    proxyAuth: o.proxyAuth as string | undefined,
    reverse: o.reverse as string[],
    logMaxSize: o.logMaxSize as number,
    logKeep: o.logKeep as number,
    auditChain: o.auditChain as boolean,
    ...(o.auditDir ? { auditDir: o.auditDir as string } : {}),
    onLogError: o.onLogError as "pass" | "block",
    otlp: {
      endpoint: o.otlpEndpoint as string | undefined,
      protocol: o.otlpProtocol as string | undefined,
      headers: o.otlpHeader as string[],
      payloads: o.otlpPayloads as boolean,
    },
    state: o.state as string | undefined,
    ...(uiPortOf(o) !== undefined ? { uiPort: uiPortOf(o)! } : {}),
    ...(interceptOf(o) ? { intercept: interceptOf(o)! } : {}),
    keylog: (o.keylog as string | undefined) ?? (process.env.SSLKEYLOGFILE || undefined),
  };
}
