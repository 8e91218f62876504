import path from "node:path";
import { loadOrCreateCa, LeafIssuer } from "../ca/index.js";
import { createLogSink } from "../log/logger.js";
import { httpRecordAddon } from "../log/http-record.js";
import { DEFAULT_MAX_PAYLOAD_BYTES, DEFAULT_PAYLOAD_MODE, type PayloadMode } from "../log/payload.js";
import { rpcRecord, sessionRecord } from "../log/rpc-record.js";
import { mcpAddon } from "../mcp/addon.js";
import { McpTracker } from "../mcp/tracker.js";
import { ProxyServer, errorText } from "../proxy/server.js";
import { upstreamRoots } from "../proxy/upstream-trust.js";
import { banner } from "./banner.js";
import { isLoopback } from "./option-parsers.js";
import { VERSION } from "./package-info.js";

export interface StartOptions {
  host: string;
  port: number;
  caDir: string;
  logFile?: string;
  config?: string;
  upstreamCa: string[];
  insecureUpstream: boolean;
  passthrough: string[];
  graceMs: number;
  payloads?: PayloadMode;
  maxPayloadBytes?: number;
  maxInspectBytes?: number;
}

export const DEFAULT_MAX_INSPECT_BYTES = 8 * 1024 * 1024;

/** Bounds on what the proxy remembers between messages. */
const MAX_PENDING_REQUESTS = 10_000;
const MAX_SESSIONS = 10_000;

export class StartError extends Error {}

export interface RunningProxy {
  address: { host: string; port: number };
  caCertPath: string;
  stop(reason: string): Promise<void>;
}

/** Starts the proxy with everything wired; used by `start` and, later, `run`. */
export async function startProxy(opts: StartOptions): Promise<RunningProxy> {
  const ca = await loadOrCreateCa(opts.caDir);
  const issuer = await LeafIssuer.create(ca);
  const roots = upstreamRoots(opts.upstreamCa);
  const sink = createLogSink(opts.logFile ? path.resolve(opts.logFile) : undefined);
  const log = sink.logger;
  if (ca.warning) log.warn({ event: "ca_warning", message: ca.warning });
  if (opts.insecureUpstream) {
    log.warn({ event: "insecure_upstream", message: "upstream certificates are NOT verified (--insecure-upstream)" });
  }
  const payloadOptions = { payloads: opts.payloads ?? DEFAULT_PAYLOAD_MODE, maxPayloadBytes: opts.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES };
  const tracker = new McpTracker(
    {
      rpc: (e) => log[e.kind === "invalid" || e.headerMismatch ? "warn" : "info"](rpcRecord(e, payloadOptions)),
      session: (r) => log.info(sessionRecord(r)),
    },
    { maxPending: MAX_PENDING_REQUESTS, maxSessions: MAX_SESSIONS },
  );
  const server = new ProxyServer({
    host: opts.host,
    port: opts.port,
    logger: log,
    addons: [mcpAddon(tracker, { maxInspectBytes: opts.maxInspectBytes ?? DEFAULT_MAX_INSPECT_BYTES }), httpRecordAddon(log)],
    secureContextFor: (host) => issuer.secureContextFor(host),
    upstreamCa: roots,
    insecureUpstream: opts.insecureUpstream,
    passthrough: opts.passthrough,
  });
  const address = await server.listen();
  log.info({
    event: "start",
    version: VERSION,
    listen: `${address.host}:${address.port}`,
    caCert: ca.certPath,
    caCreated: ca.created,
    insecureUpstream: opts.insecureUpstream,
    passthrough: opts.passthrough,
  });
  process.stderr.write(banner({ address, caCertPath: ca.certPath, caCreated: ca.created, logTarget: sink.target, insecure: opts.insecureUpstream }));
  let stopping: Promise<void> | null = null;
  return {
    address,
    caCertPath: ca.certPath,
    stop(reason) {
      stopping ??= (async () => {
        await server.close(opts.graceMs);
        log.info({ event: "stop", reason });
        await sink.flush();
      })();
      return stopping;
    },
  };
}

/** `mcp-wiretap start`: runs until SIGINT/SIGTERM, then shuts down cleanly and exits 0. */
export async function startCommand(opts: StartOptions): Promise<void> {
  if (!isLoopback(opts.host)) {
    process.stderr.write(
      `mcp-wiretap: listening on ${opts.host} would expose the proxy beyond this machine; ` +
        "this needs --proxy-auth, which is not available in this version. Use 127.0.0.1.\n",
    );
    process.exit(2);
  }
  const proxy = await startProxy(opts);
  const onSignal = (signal: NodeJS.Signals): void => {
    process.once(signal, () => process.exit(130));
    proxy.stop(signal).then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`mcp-wiretap: error while stopping: ${errorText(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
}
