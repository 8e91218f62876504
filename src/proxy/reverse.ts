import type http from "node:http";
import type { ForwardRoute } from "./forward.js";
import { formatTarget, validateHost, validatePort, type Target } from "./target.js";
import { redactUserinfo } from "../log/redact.js";
import { UsageError } from "../util/usage-error.js";

/** `--reverse [LOCAL=]URL`: LOCAL is `/prefix` (on the proxy's own port) or `:port` (a listener of its own). */
export interface ReverseMapping {
  local: { kind: "prefix"; prefix: string } | { kind: "port"; port: number };
  target: Target;
  secure: boolean;
  /** Path prefix on the upstream, without a trailing slash ("" for the root). */
  upstreamPath: string;
  /** Host header the upstream expects. */
  hostHeader: string;
}

export class ReverseSpecError extends UsageError {}

export function parseReverseSpec(spec: string): ReverseMapping {
  const eq = spec.indexOf("=");
  const local = eq > 0 && !spec.slice(0, eq).includes("://") ? spec.slice(0, eq) : "";
  const urlText = local ? spec.slice(eq + 1) : spec;
  // Said back in error messages: never with the credentials a mistaken URL may carry.
  const shown = redactUserinfo(spec);
  let url: URL;
  try {
    url = new URL(urlText);
  } catch {
    throw new ReverseSpecError(`--reverse ${shown}: ${JSON.stringify(redactUserinfo(urlText))} is not a URL (https://host[:port][/path])`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new ReverseSpecError(`--reverse ${shown}: only http and https upstreams`);
  if (url.username || url.password) throw new ReverseSpecError(`--reverse ${shown}: put credentials in the client, not in the URL`);
  const host = validateHost(url.hostname);
  if (!host.ok) throw new ReverseSpecError(`--reverse ${shown}: ${host.reason}`);
  const secure = url.protocol === "https:";
  const port = url.port ? validatePort(url.port) : secure ? 443 : 80;
  if (port === null) throw new ReverseSpecError(`--reverse ${shown}: bad port`);
  const mapping = {
    target: { host: host.host, port },
    secure,
    upstreamPath: url.pathname.replace(/\/+$/, ""),
    hostHeader: url.host,
  };
  if (local === "" || local === "/") return { ...mapping, local: { kind: "prefix", prefix: "" } };
  if (local.startsWith(":")) {
    // :0 picks a free port (tests, scripts); the start record and banner say which.
    const localPort = local === ":0" ? 0 : validatePort(local.slice(1));
    if (localPort === null) throw new ReverseSpecError(`--reverse ${shown}: local port must be 1-65535`);
    return { ...mapping, local: { kind: "port", port: localPort } };
  }
  if (!/^\/[A-Za-z0-9._~!$&'()*+,;:@%/-]*$/.test(local)) throw new ReverseSpecError(`--reverse ${shown}: local part must be /prefix or :port`);
  return { ...mapping, local: { kind: "prefix", prefix: local.replace(/\/+$/, "") } };
}

/** The mapping an origin-form request on the proxy's own port belongs to: the longest matching prefix. */
export function findPrefixMapping(mappings: readonly ReverseMapping[], path: string): ReverseMapping | undefined {
  let best: ReverseMapping | undefined;
  for (const m of mappings) {
    if (m.local.kind !== "prefix") continue;
    const p = m.local.prefix;
    const hit = p === "" || path === p || path.startsWith(`${p}/`) || path.startsWith(`${p}?`);
    if (hit && (!best || p.length > (best.local as { prefix: string }).prefix.length)) best = m;
  }
  return best;
}

export function reverseRoute(m: ReverseMapping, req: http.IncomingMessage, requestTarget: string): ForwardRoute {
  const prefix = m.local.kind === "prefix" ? m.local.prefix : "";
  let rest = requestTarget.slice(prefix.length);
  if (!rest.startsWith("/")) rest = `/${rest}`;
  const path = m.upstreamPath && rest === "/" ? m.upstreamPath : `${m.upstreamPath}${rest}`;
  return {
    mode: "reverse",
    target: m.target,
    secure: m.secure,
    client: { address: req.socket.remoteAddress ?? "unknown", port: req.socket.remotePort ?? 0, tls: null },
    path,
    hostHeader: m.hostHeader,
  };
}

export function describeMapping(m: ReverseMapping, proxyUrl: string, host: string, port?: number): string {
  const local = m.local.kind === "port" ? `http://${formatTarget({ host, port: port ?? m.local.port })}` : `${proxyUrl}${m.local.prefix}/`;
  return `${local} → ${m.secure ? "https" : "http"}://${formatTarget(m.target)}${m.upstreamPath}`;
}
