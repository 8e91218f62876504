/**
 * A replay over HTTP goes through a proxy of its own, started for it: the same pipeline as live traffic
 * (decoded, judged by the policy, enforce mode able to deny, recorded), served in reverse mode on a free
 * loopback port so the replay speaks plain HTTP to it and the proxy does TLS to the server, trusting what
 * `start` would (`--upstream-ca`, `--insecure-upstream`). Every record it writes carries `replayOf`.
 */
import { Agent } from "undici";
import type { PayloadMode } from "../log/payload.js";
import type { PolicyMode } from "../policy/config.js";
import type { RecordPipeline } from "../pipeline/record-pipeline.js";
import { HttpChannel } from "./http-channel.js";
import { LegacyChannel } from "./legacy-channel.js";
import { replaySession, type SessionPlan, type SessionResult } from "./session.js";
import { isStateless } from "./stateless.js";

export interface ReplayProxyOptions {
  caDir: string;
  /** Where the replay's records go: a file, appended to, or a stream of record lines (the web UI's running proxy). */
  logFile: string | NodeJS.WritableStream;
  config?: string;
  /** Overrides the policy file's mode. */
  mode?: PolicyMode;
  /** A running proxy's policy, used as it is (a replay from its UI: its rate-limit counters and pins). */
  policy?: RecordPipeline;
  upstreamCa: string[];
  insecureUpstream: boolean;
  payloads?: PayloadMode;
  maxPayloadBytes?: number;
  maxInspectBytes?: number;
  connectTimeoutMs?: number;
}

export interface HttpReplay {
  transport: "streamable-http" | "http+sse";
  /** The server's URL (of a legacy server: its event stream). */
  url: URL;
  headers: Record<string, string>;
  replayOf: string;
  timeoutMs: number;
}

export async function replayOverHttp(r: HttpReplay, plan: SessionPlan, o: ReplayProxyOptions): Promise<SessionResult> {
  const { startProxy } = await import("../cli/start.js");
  const proxy = await startProxy({
    host: "127.0.0.1",
    port: 0,
    caDir: o.caDir,
    ...(typeof o.logFile === "string" ? { logFile: o.logFile } : { logStream: o.logFile }),
    ...(o.config ? { config: o.config } : {}),
    ...(o.mode ? { mode: o.mode } : {}),
    ...(o.policy ? { policy: o.policy } : {}),
    upstreamCa: o.upstreamCa,
    insecureUpstream: o.insecureUpstream,
    passthrough: [],
    graceMs: 1000,
    reverse: [r.url.origin],
    ...(o.payloads ? { payloads: o.payloads } : {}),
    ...(o.maxPayloadBytes ? { maxPayloadBytes: o.maxPayloadBytes } : {}),
    ...(o.maxInspectBytes ? { maxInspectBytes: o.maxInspectBytes } : {}),
    ...(o.connectTimeoutMs ? { connectTimeoutMs: o.connectTimeoutMs } : {}),
    clientHint: false,
    banner: false,
    recordFields: { replayOf: r.replayOf },
    secretValues: Object.values(r.headers),
  });
  const dispatcher = new Agent({ connections: 4 });
  const local = `http://127.0.0.1:${proxy.address.port}${r.url.pathname}${r.url.search}`;
  try {
    if (r.transport === "http+sse") {
      const channel = await LegacyChannel.open({ url: local, upstreamOrigin: r.url.origin, dispatcher, headers: r.headers, timeoutMs: r.timeoutMs });
      return await replaySession(channel, plan);
    }
    const channel = new HttpChannel({ url: local, dispatcher, headers: r.headers, stateless: isStateless(plan.protocolVersion), timeoutMs: r.timeoutMs });
    return await replaySession(channel, plan, (version) => channel.useProtocolVersion(version));
  } finally {
    await dispatcher.close().catch(() => {});
    await proxy.stop("replay done");
  }
}
