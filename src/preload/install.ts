/**
 * What the preload installs: for Node versions whose `NODE_USE_ENV_PROXY=1` does not cover `fetch` or the
 * `http`/`https` modules yet, the same behaviour by hand.
 *
 * - `fetch`: Node's own undici `Agent` (taken from the default global dispatcher, so it is the copy that
 *   Node's fetch speaks to) with a `connect` function that opens a CONNECT tunnel through the proxy, or
 *   connects directly for NO_PROXY hosts; installed as the global dispatcher. (The npm `undici` package this
 *   project depends on needs Node ≥ 22.19 and does not load on Node 20; Node's bundled copy always fits.)
 * - `http`/`https`: `http.globalAgent` / `https.globalAgent` replaced by agents whose `createConnection`
 *   does the same. Plain-http targets go through CONNECT too, as undici does.
 *
 * Trust is Node's own: `NODE_EXTRA_CA_CERTS` is read at process start and applies to these sockets.
 * Part of the preload: runs on Node 20, imports nothing from the rest of the package.
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { Duplex } from "node:stream";
import tls from "node:tls";
import { bypassesProxy, parseNoProxy, type NoProxy } from "./no-proxy.js";
import { bareHost, CONNECT_TIMEOUT_MS, openTunnel, secureOver, tlsServername } from "./tunnel.js";

/** Which parts of NODE_USE_ENV_PROXY a Node version has natively. */
export function nativeEnvProxy(version: string = process.versions.node): { fetch: boolean; http: boolean } {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return {
    fetch: major >= 24 || (major === 22 && minor >= 21),
    http: major >= 25 || (major === 24 && minor >= 5) || (major === 22 && minor >= 21),
  };
}

export interface EnvProxySettings {
  httpProxy: URL | null;
  httpsProxy: URL | null;
  noProxy: NoProxy;
}

function proxyUrl(name: string, value: string | undefined): URL | null {
  if (!value) return null;
  // Said back in error messages without the credentials the setting may carry (the preload imports nothing
  // from the rest of the package: this is log/redact's redactUserinfo, inlined).
  const shown = value.replace(/\/\/[^/?#\s@]*@/g, "//[redacted]@");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name}=${shown} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name}=${shown}: only http:// and https:// proxies are supported`);
  return url;
}

/** The environment as undici's EnvHttpProxyAgent reads it (lower case first; HTTPS falls back to HTTP). */
export function envProxySettings(env: NodeJS.ProcessEnv = process.env): EnvProxySettings {
  const httpProxy = proxyUrl("HTTP_PROXY", env.http_proxy || env.HTTP_PROXY);
  const httpsProxy = proxyUrl("HTTPS_PROXY", env.https_proxy || env.HTTPS_PROXY) ?? httpProxy;
  return { httpProxy, httpsProxy, noProxy: parseNoProxy(env.no_proxy ?? env.NO_PROXY) };
}

export function proxyFor(settings: EnvProxySettings, secure: boolean, host: string, port: number): URL | null {
  const proxy = secure ? settings.httpsProxy : settings.httpProxy;
  if (!proxy || bypassesProxy(settings.noProxy, host, port)) return null;
  return proxy;
}

function connectDirect(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: bareHost(host), port });
    const timer = setTimeout(() => socket.destroy(new Error(`connect ${host}:${port} timed out`)), CONNECT_TIMEOUT_MS);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.off("error", onError);
      resolve(socket);
    });
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    socket.once("error", onError);
  });
}

/** What undici passes to a `connect` function. */
interface UndiciConnectOptions {
  hostname: string;
  host?: string;
  protocol: string;
  port: string | number;
  servername?: string | null;
}

type UndiciConnector = (opts: UndiciConnectOptions, callback: (err: Error | null, socket: net.Socket | null) => void) => void;

export function undiciConnector(settings: EnvProxySettings): UndiciConnector {
  return (opts, callback) => {
    const secure = opts.protocol === "https:";
    const port = Number(opts.port) || (secure ? 443 : 80);
    const proxy = proxyFor(settings, secure, opts.hostname, port);
    const raw = proxy ? openTunnel(proxy, opts.hostname, port) : connectDirect(opts.hostname, port);
    raw
      .then((socket): Promise<net.Socket> | net.Socket => (secure ? secureOver(socket, opts.hostname, opts.servername ?? undefined) : socket))
      .then(
        (socket) => callback(null, socket),
        (err: Error) => callback(err, null),
      );
  };
}

const GLOBAL_DISPATCHER = Symbol.for("undici.globalDispatcher.1");

type AgentClass = new (options: { connect: UndiciConnector }) => object;

/** Node's bundled undici `Agent`, from the default global dispatcher; null when someone installed another dispatcher. */
function builtinAgentClass(): AgentClass | null {
  const g = globalThis as unknown as Record<symbol, unknown>;
  // Node loads its undici lazily; touching a fetch global loads it, which installs the default Agent.
  if (g[GLOBAL_DISPATCHER] === undefined) void (globalThis as { Headers?: unknown }).Headers;
  const current = g[GLOBAL_DISPATCHER] as { constructor?: { name?: string } } | undefined;
  if (!current || current.constructor?.name !== "Agent") return null;
  return current.constructor as unknown as AgentClass;
}

export function installFetchProxy(settings: EnvProxySettings): "installed" | "kept" {
  const Agent = builtinAgentClass();
  if (!Agent) return "kept";
  (globalThis as unknown as Record<symbol, unknown>)[GLOBAL_DISPATCHER] = new Agent({ connect: undiciConnector(settings) });
  return "installed";
}

type ConnectionCallback = (err: Error | null, stream: Duplex) => void;

/** `http.Agent` / `https.Agent` whose connections go through the proxy unless NO_PROXY says otherwise. */
function tunnelingAgent<T extends typeof http.Agent>(Base: T, secure: boolean, settings: EnvProxySettings): InstanceType<T> {
  class TunnelingAgent extends (Base as typeof http.Agent) {
    override createConnection(options: http.ClientRequestArgs, callback?: ConnectionCallback): Duplex | null | undefined {
      const host = options.host ?? options.hostname ?? "localhost";
      const port = Number(options.port) || (secure ? 443 : 80);
      const proxy = options.socketPath ? null : proxyFor(settings, secure, host, port);
      if (!proxy) return super.createConnection(options, callback);
      openTunnel(proxy, host, port).then(
        (socket) => {
          if (!secure) return callback?.(null, socket);
          const tlsOptions = options as tls.ConnectionOptions;
          const servername = tlsServername(host, tlsOptions.servername);
          callback?.(null, tls.connect({ ...tlsOptions, socket, host: bareHost(host), servername }));
        },
        (err: Error) => callback?.(err, undefined as unknown as Duplex),
      );
      return undefined;
    }
  }
  // The defaults of Node's own global agents.
  return new TunnelingAgent({ keepAlive: true, scheduling: "lifo", timeout: 5000 }) as InstanceType<T>;
}

export function installHttpProxy(settings: EnvProxySettings): void {
  http.globalAgent = tunnelingAgent(http.Agent, false, settings);
  https.globalAgent = tunnelingAgent(https.Agent, true, settings);
}

const INSTALLED = Symbol.for("mcp-wiretap.preload");

/**
 * Does what NODE_USE_ENV_PROXY=1 would, where this Node cannot: only when NODE_USE_ENV_PROXY=1 is set (the
 * preload back-ports that switch, it does not replace it) and a proxy is configured. A no-op on Node 24.5+.
 */
export function installEnvProxy(env: NodeJS.ProcessEnv = process.env): { fetch: string; http: string } {
  const g = globalThis as unknown as Record<symbol, unknown>;
  if (g[INSTALLED]) return { fetch: "already", http: "already" };
  if (env.NODE_USE_ENV_PROXY !== "1") return { fetch: "off", http: "off" };
  const native = nativeEnvProxy();
  if (native.fetch && native.http) return { fetch: "native", http: "native" };
  const settings = envProxySettings(env);
  if (!settings.httpProxy && !settings.httpsProxy) return { fetch: "no proxy", http: "no proxy" };
  g[INSTALLED] = true;
  const result = { fetch: "native", http: "native" };
  if (!native.fetch) result.fetch = installFetchProxy(settings);
  if (!native.http) {
    installHttpProxy(settings);
    result.http = "installed";
  }
  return result;
}
