import type { PolicyMode } from "../policy/config.js";
import path from "node:path";
import { loadOrCreateCa, sharedLeafIssuer } from "../ca/index.js";
import { DEFAULT_MAX_INSPECT_BYTES } from "../body/index.js";
import { DEFAULT_MAX_INSPECT_MEMORY, InspectBudget } from "../budget/inspect-budget.js";
import { createLogSink, type LogSink } from "../log/logger.js";
import type { OnLogError } from "../log/log-health.js";
import { httpRecordAddon } from "../records/http-record.js";
import { caWarningRecord, connectPolicyRecord, insecureUpstreamRecord, proxyStartRecord, stopRecord } from "../records/lifecycle-records.js";
import { recordProxyEvents } from "../records/proxy-records.js";
import type { PayloadMode } from "../log/payload.js";
import { mcpAddon } from "../mcp/addon.js";
import { authTrafficAddon } from "../mcp/auth-traffic.js";
import { ProxyServer, errorText } from "../proxy/server.js";
import { upstreamRoots } from "../proxy/upstream-trust.js";
import { formatTarget } from "../proxy/target.js";
import { ProxyAuth } from "../proxy/proxy-auth.js";
import { KeyLog } from "../proxy/keylog.js";
import { describeMapping, parseReverseSpec, type ReverseMapping } from "../proxy/reverse.js";
import { banner, cliCommand } from "./banner.js";
import { clientSettings, proxyUrlFor, renderSetting } from "./client-env.js";
import { isLoopback } from "./option-parsers.js";
import { PACKAGE_ROOT, VERSION } from "../util/package-info.js";
import { WaitingBudget } from "../budget/waiting-budget.js";
import { createMessagePipeline, loadPolicy, payloadOptions, type RecordPipeline } from "../pipeline/record-pipeline.js";
import type { ContentDetectors } from "../policy/policy.js";
import { UsageError } from "../util/usage-error.js";
import { otlpSettings, type OtlpOptions } from "../otel/otlp-config.js";
import { createInterceptor, type InterceptSettings } from "../intercept/create-interceptor.js";
import { interceptHooks } from "../intercept/http-hold.js";
import { ServerAnswers } from "../intercept/server-answer.js";

export interface StartOptions {
  host: string;
  port: number;
  caDir: string;
  logFile?: string;
  /** Records go to this stream instead of a file (a replay from the web UI: into the running proxy's log). */
  logStream?: NodeJS.WritableStream;
  config?: string;
  /** Overrides the policy file's mode. */
  mode?: PolicyMode;
  upstreamCa: string[];
  insecureUpstream: boolean;
  passthrough: string[];
  graceMs: number;
  payloads?: PayloadMode;
  maxPayloadBytes?: number;
  maxInspectBytes?: number;
  /** Memory all bodies and events held for inspection may take (an eighth of it per peer); default 256 MiB. */
  maxInspectMemory?: number;
  /** `user:password`; required to listen beyond loopback. */
  proxyAuth?: string;
  /** Reverse-mode specs, `[local=]url` (see `--reverse`). */
  reverse?: string[];
  /** Rotate the log file past this many bytes (0 or absent: never). */
  logMaxSize?: number;
  logKeep?: number;
  /** Without a log file: the descriptor records go to (default 1, stdout). */
  logFd?: number;
  /** NSS key-log file for both TLS legs. */
  keylog?: string;
  /** Every record carries `seq`, the hash of the one before and a MAC (`mcp-wiretap verify-log`). */
  auditChain?: boolean;
  /** Folder of the audit key and state; default `audit/` in the CA folder. */
  auditDir?: string;
  /** When records cannot be written: keep passing traffic (default) or refuse it. */
  onLogError?: OnLogError;
  /** How long a new upstream connection may take, TCP connect and TLS handshake (default 30 s). */
  connectTimeoutMs?: number;
  /** Slow-client guards (tests shorten them): request head, and CONNECT tunnel handshake. */
  headersTimeoutMs?: number;
  handshakeTimeoutMs?: number;
  /**
   * Bytes that may wait behind a judgement that asks shared state, per exchange and in all, before the
   * exchange's senders are no longer read (default 4 MiB and 64 MiB; not a CLI option: tests shrink it).
   */
  waitingBytes?: { perStream: number; total: number };
  /** Replaces the policy's content detectors (not a CLI option: tests prove how a failing detector is handled). */
  detectors?: ContentDetectors;
  /** The banner's "point a client at it" block (default true); `run` sets its command up itself. */
  clientHint?: boolean;
  /** Serve the web UI on this loopback port (0: any free port); absent: no UI. */
  uiPort?: number;
  /** `--intercept`: messages it selects wait for a person in the web UI. */
  intercept?: InterceptSettings;
  /** OpenTelemetry export (`--otlp-*`, OTEL_* variables). */
  otlp?: OtlpOptions;
  /** Shared state for replicas (`--state redis://…`): pins and rate-limit counters. */
  state?: string;
  /**
   * A running proxy's policy, used as it is (its rate-limit counters, pins and shared state) in place of
   * `config`, `mode` and `state`: a replay from that proxy's web UI counts as its traffic does.
   */
  policy?: RecordPipeline;
  /** The banner on stderr (default true); a replay's proxy has none. */
  banner?: boolean;
  /** Members every record carries (a replay's `replayOf`). */
  recordFields?: Record<string, string>;
  /** Values removed from every record of every exchange (credentials a replay was given on its command line). */
  secretValues?: string[];
}

export class StartError extends UsageError {}

/** Record lines waiting for the OTLP exporter at most; beyond, they are dropped and reported (`record_stream_drops`). */
const OTLP_FEED_QUEUE = 10_000;
/** Characters of record lines waiting for the OTLP exporter at most (a peer's huge messages make long lines). */
const OTLP_FEED_CHARS = 32 * 1024 * 1024;

export interface RunningProxy {
  address: { host: string; port: number; reversePorts: number[] };
  caCertPath: string;
  /** The CA certificate together with the system roots, for clients that take one file (see ca/). */
  caBundlePath: string;
  /** The web UI's address (with its token), when one is served. */
  uiUrl?: string;
  stop(reason: string): Promise<void>;
}

/** Starts the proxy with everything wired; used by `start` and, later, `run`. */
export async function startProxy(opts: StartOptions): Promise<RunningProxy> {
  const proxyAuth = parseProxyAuth(opts);
  const reverse = parseReverse(opts);
  const otlp = otlpSettings(opts.otlp ?? {});
  // `log` exists before any traffic, hence before any warning.
  const state = opts.policy
    ? null
    : opts.state
    ? await (await import("../state/shared-state.js")).openSharedState(opts.state, { localPins: path.join(path.resolve(opts.caDir), "pins.json"), warn: (w) => log.warn(w) })
    : null;
  const loaded = opts.policy ?? (await loadPolicy(opts.config, path.resolve(opts.caDir), (w) => log.warn(w), state ? { pins: state.pins, rateLimiter: state.rateLimiter, slicedScans: true } : { slicedScans: true }, opts.detectors, opts.mode));
  const { policyFile, policyConfig, policy } = loaded;
  const ca = await loadOrCreateCa(opts.caDir);
  const issuer = await sharedLeafIssuer(ca);
  const caFingerprint = ca.info().fingerprint256;
  const roots = upstreamRoots(opts.upstreamCa);
  const sink = createLogSink({
    ...(opts.logStream ? { stream: opts.logStream } : opts.logFile ? { file: path.resolve(opts.logFile) } : {}),
    ...(opts.logMaxSize ? { maxSize: opts.logMaxSize } : {}),
    ...(opts.logKeep ? { keep: opts.logKeep } : {}),
    ...(opts.logFd !== undefined ? { fd: opts.logFd } : {}),
    ...(opts.auditChain ? { auditChain: { dir: path.resolve(opts.auditDir ?? path.join(ca.dir, "audit")) } } : {}),
    onError: opts.onLogError ?? "pass",
    ...(opts.recordFields ? { recordFields: opts.recordFields } : {}),
  });
  const log = sink.logger;
  if (state?.problem) {
    log.warn({ event: "state_unavailable", state: state.where, message: state.problem });
    // A log file is not where a user looks at start: the warning goes to the terminal as well.
    if (opts.logFile) process.stderr.write(`mcp-wiretap: WARNING: ${state.where}: ${state.problem}\n`);
  }
  // Fed from the record stream: spans are made from the records as written, off the traffic's path.
  const otel = otlp ? new (await import("../otel/otlp-exporter.js")).OtlpExporter(otlp, VERSION, (w) => log.warn(w)) : null;
  const otelFeed = otel ? sink.records.subscribe((line) => otel.line(line), { name: "otlp", maxQueue: OTLP_FEED_QUEUE, maxQueueChars: OTLP_FEED_CHARS }) : null;
  if (ca.warning) log.warn(caWarningRecord(ca.warning));
  if (opts.insecureUpstream) {
    log.warn(insecureUpstreamRecord());
  }
  const maxInspectBytes = opts.maxInspectBytes ?? DEFAULT_MAX_INSPECT_BYTES;
  const budget = new InspectBudget(opts.maxInspectMemory ?? DEFAULT_MAX_INSPECT_MEMORY);
  // What waits behind a judgement that asks shared state, bounded in bytes per exchange and in all.
  const waiting = new WaitingBudget(opts.waitingBytes?.perStream, opts.waitingBytes?.total);
  const pipeline = createMessagePipeline(policy, policyConfig, sink, payloadOptions(opts), waiting);
  const intercept = opts.intercept ? createInterceptor(opts.intercept, sink, payloadOptions(opts), opts.maxInspectBytes ?? DEFAULT_MAX_INSPECT_BYTES) : undefined;
  const keylog = opts.keylog ? new KeyLog(path.resolve(opts.keylog)) : null;
  const server = new ProxyServer({
    host: opts.host,
    port: opts.port,
    report: recordProxyEvents(log),
    addons: [sink.secrets.addon(), ...sink.secrets.knownValuesAddon(opts.secretValues), mcpAddon(pipeline, { maxInspectBytes, budget, enforce: policy.enforcing ? { maxInspectBytes, budget, removeDeniedTools: policyConfig.removeDeniedTools } : undefined, ...(intercept ? { intercept: interceptHooks(intercept, policyConfig.removeDeniedTools, new ServerAnswers({ upstreamCa: roots, insecureUpstream: opts.insecureUpstream })) } : {}) }), httpRecordAddon(log, (flow) => sink.secrets.known(flow)), authTrafficAddon(log, { secrets: sink.secrets })],
    secureContextFor: (host) => issuer.secureContextFor(host),
    upstreamCa: roots,
    insecureUpstream: opts.insecureUpstream,
    passthrough: opts.passthrough,
    proxyAuth,
    reverse,
    ...(opts.connectTimeoutMs ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
    ...(opts.headersTimeoutMs ? { headersTimeoutMs: opts.headersTimeoutMs } : {}),
    ...(opts.handshakeTimeoutMs ? { handshakeTimeoutMs: opts.handshakeTimeoutMs } : {}),
    ...(keylog ? { keylog: keylog.write } : {}),
    // The CA's fingerprint lets `run --proxy` and `env` check that clients trust the CA this proxy signs with.
    health: () => ({ inspectMemory: budget.usage(), waitingMemory: waiting.usage(), memory: processMemory(), ca: { sha256: caFingerprint } }),
    refuseTraffic: () =>
      sink.health.blocking ? `cannot write log records (${(sink.health.failing as NodeJS.ErrnoException).code ?? "error"}) and --on-log-error is block` : null,
    decideConnect: (target) => {
      const denied = policy.judgeConnect(target.host, target.port);
      if (!denied) return null;
      const server = formatTarget(target);
      log.warn(connectPolicyRecord(server, policy.enforcing, denied.rule, denied.reason));
      return policy.enforcing ? { action: "deny", status: 403, reason: `${server} is denied by policy rule ${denied.rule}: ${denied.reason}` } : null;
    },
  });
  const address = await server.listen();
  const proxyUrl = `http://${formatTarget({ host: address.host, port: address.port })}`;
  const reversePorts = [...address.reversePorts];
  const ui =
    opts.uiPort === undefined
      ? null
      : await (await import("../ui/server/live-ui.js")).startLiveUi(sink.records, opts.uiPort, (r) => log.warn(r), intercept, await uiReplaySettings(opts, sink, loaded)).catch(async (err: unknown) => {
          await server.close(0);
          throw err;
        });
  const reverseLines = reverse.map((m) => describeMapping(m, proxyUrl, address.host, m.local.kind === "port" ? reversePorts.shift() : undefined));
  log.info(
    proxyStartRecord({
      version: VERSION,
      listen: `${address.host}:${address.port}`,
      caCert: ca.certPath,
      caCreated: ca.created,
      insecureUpstream: opts.insecureUpstream,
      passthrough: opts.passthrough,
      policy: { file: policyFile, mode: policyConfig.mode },
      reverse: reverseLines,
      ...(keylog ? { keylog: keylog.file } : {}),
    }),
  );
  if (opts.banner !== false) process.stderr.write(
    banner({
      address,
      caCertPath: ca.certPath,
      caCreated: ca.created,
      logTarget: sink.target,
      insecure: opts.insecureUpstream,
      policy: `${policyFile} (${policyConfig.mode}${opts.mode ? ", from --mode" : ""})`,
      reverse: reverseLines,
      ...(opts.clientHint !== false && reverse.length === 0 ? { client: clientHint(address, ca, opts) } : {}),
      ...(ui ? { ui: ui.url } : {}),
    }),
  );
  let stopping: Promise<void> | null = null;
  return {
    address,
    caCertPath: ca.certPath,
    caBundlePath: ca.bundlePath,
    ...(ui ? { uiUrl: ui.url } : {}),
    stop(reason) {
      stopping ??= (async () => {
        // Held messages are dropped (their senders answered) so that their exchanges can end.
        intercept?.queue.dropAll("the proxy is stopping");
        await server.close(opts.graceMs);
        policy.flushEvictions();
        await ui?.close();
        ui?.flushEvictions();
        // Subscribers' last drop counts go before `stop`, which stays the last record (verify-log checks it).
        if (otelFeed) {
          // The feed drains 512 lines a turn: let what the last exchanges wrote reach the exporter.
          for (let turn = 0; turn < 8; turn++) await new Promise((resolve) => setImmediate(resolve));
          otelFeed.stop();
        }
        await otel?.stop();
        sink.records.close();
        await keylog?.close();
        await state?.close();
        log.info(stopRecord({ reason, droppedRecords: sink.health.dropped }));
        await sink.flush();
      })();
      return stopping;
    },
  };
}

/** The UI of a running proxy replays as `replay` would, with this proxy's settings and policy (its counters), into this proxy's log. */
async function uiReplaySettings(opts: StartOptions, sink: LogSink, policy: RecordPipeline) {
  const { runningLogStream } = await import("../ui/server/replay-actions.js");
  return {
    proxy: {
      caDir: opts.caDir,
      policy,
      upstreamCa: opts.upstreamCa,
      insecureUpstream: opts.insecureUpstream,
      ...(opts.payloads ? { payloads: opts.payloads } : {}),
      ...(opts.maxPayloadBytes ? { maxPayloadBytes: opts.maxPayloadBytes } : {}),
      ...(opts.maxInspectBytes ? { maxInspectBytes: opts.maxInspectBytes } : {}),
      ...(opts.connectTimeoutMs ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
    },
    records: runningLogStream((line) => sink.writeLine(line)),
    timeoutMs: UI_REPLAY_TIMEOUT_MS,
  };
}

/** How long a replay from the web UI waits for each answer (the CLI's --timeout default). */
const UI_REPLAY_TIMEOUT_MS = 60_000;

/** `mcp-wiretap start`: runs until SIGINT/SIGTERM, then shuts down cleanly and exits 0. */
export async function startCommand(opts: StartOptions): Promise<void> {
  // Listening for signals before the banner goes out: a script that stops the proxy as soon as it sees the
  // banner must get a clean stop (and the stop record), not Node's default exit on SIGINT.
  let proxy: RunningProxy | null = null;
  let received: NodeJS.Signals | null = null;
  const stop = (signal: NodeJS.Signals, running: RunningProxy): void => {
    running.stop(signal).then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`mcp-wiretap: error while stopping: ${errorText(err)}\n`);
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    process.once(signal, () => process.exit(130));
    received ??= signal;
    if (proxy) stop(signal, proxy);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  proxy = await startProxy(opts);
  if (received) stop(received, proxy);
}

/** The lines `mcp-wiretap env` prints for this proxy and CA, in this process's environment. */
function clientHint(address: { host: string; port: number }, ca: { dir: string; certPath: string; bundlePath: string }, opts: StartOptions) {
  // With --proxy-auth the lines carry the credentials (without them a client gets 407), but only to a
  // terminal: a stderr that is a file or a container's log keeps them out, as records always do.
  const shown = opts.proxyAuth !== undefined && process.stderr.isTTY === true ? opts.proxyAuth : undefined;
  const proxyUrl = proxyUrlFor(address, shown);
  const settings = clientSettings({ proxyUrl, caCertPath: ca.certPath, bundlePath: ca.bundlePath }, process.env);
  return {
    exports: settings.map((s) => renderSetting("sh", s)),
    caDir: ca.dir,
    proxyUrl,
    credentialsLeftOut: opts.proxyAuth !== undefined && shown === undefined,
    command: cliCommand(process.env, PACKAGE_ROOT),
  };
}

/** Anyone who can reach the proxy can use it as an open relay into decrypted traffic: beyond loopback it needs credentials. */
function parseProxyAuth(opts: StartOptions): ProxyAuth | null {
  // A malformed value throws ProxyAuthError, a usage error like StartError.
  const auth = opts.proxyAuth ? ProxyAuth.parse(opts.proxyAuth) : null;
  if (!auth && !isLoopback(opts.host)) {
    throw new StartError(
      `listening on ${opts.host} exposes the proxy beyond this machine: set --proxy-auth user:password ` +
        "(or MCP_WIRETAP_PROXY_AUTH), or listen on 127.0.0.1",
    );
  }
  return auth;
}

function parseReverse(opts: StartOptions): ReverseMapping[] {
  const specs = opts.reverse ?? [];
  if (specs.length > 0 && !isLoopback(opts.host)) {
    throw new StartError("--reverse serves upstreams without proxy credentials: it needs a loopback --host");
  }
  return specs.map(parseReverseSpec); // a bad spec throws ReverseSpecError, a usage error
}

/** The process's memory as `/healthz` shows it (bytes): what a budget or table bound is weighed against. */
function processMemory(): { rss: number; heapUsed: number; external: number; arrayBuffers: number } {
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, external, arrayBuffers };
}
