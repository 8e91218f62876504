/**
 * The environment that points a client at the proxy and makes it trust the proxy's CA, shared by
 * `mcp-wiretap run` (applied to the child) and `mcp-wiretap env` (printed as shell commands).
 */
import { InvalidArgumentError } from "commander";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PACKAGE_ROOT } from "../util/package-info.js";
import { ProxyAuth } from "../proxy/proxy-auth.js";
import { formatTarget } from "../proxy/target.js";

/**
 * The preload for Node versions without NODE_USE_ENV_PROXY support (see src/preload/env-proxy.ts). Always the
 * built file: the client's Node runs it, not the one running this module.
 */
export const PRELOAD_FILE = path.join(PACKAGE_ROOT, "dist", "preload", "env-proxy.js");

export function preloadImportUrl(file: string = PRELOAD_FILE): string {
  return pathToFileURL(file).href;
}

export const DEFAULT_PROXY_URL = "http://127.0.0.1:8080";

export interface ClientSettingsInput {
  /** `http://[user:pass@]host:port` of the proxy. */
  proxyUrl: string;
  /** Our CA alone (added to Node's roots via NODE_EXTRA_CA_CERTS). */
  caCertPath: string;
  /** System roots plus our CA, for clients whose CA setting replaces the defaults (Python, curl). */
  bundlePath: string;
  /** Add the Node 20/22 preload to NODE_OPTIONS (default true). */
  preload?: boolean;
}

/** One setting: a value, or null to remove the variable. */
export type Setting = [name: string, value: string | null];

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "::1", "[::1]", "0:0:0:0:0:0:0:1"]);

function isLoopbackEntry(entry: string): boolean {
  let host = entry.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed) host = bracketed[1]!;
  else host = host.replace(/^([^:]+):\d+$/, "$1");
  host = host.replace(/^\*/, "");
  if (LOOPBACK_NAMES.has(host)) return true;
  if (host === ".localhost" || host.endsWith(".localhost") || host === "localhost.") return true;
  return /^127(\.(\d+|\*))*(\/\d+)?$/.test(host) || /^::1\/\d+$/.test(host);
}

/**
 * NO_PROXY without its loopback entries (localhost, 127.*, ::1, .localhost): many clients would otherwise
 * skip the proxy for a local MCP server. The other entries stay, in order, without duplicates.
 */
export function cleanNoProxy(...values: (string | undefined)[]): string {
  const kept: string[] = [];
  for (const value of values) {
    for (const entry of (value ?? "").split(/[,\s]+/)) {
      const trimmed = entry.trim();
      if (trimmed.length === 0 || isLoopbackEntry(trimmed) || kept.includes(trimmed)) continue;
      kept.push(trimmed);
    }
  }
  return kept.join(",");
}

/** `existing` with `--import <url>` appended, unless it is there already. */
export function withPreload(existing: string | undefined, url: string = preloadImportUrl()): string {
  const current = (existing ?? "").trim();
  if (current.split(/\s+/).some((token) => token === url || token === `--import=${url}`)) return current;
  return current.length > 0 ? `${current} --import ${url}` : `--import ${url}`;
}

/** Checks a `--proxy` value: an http(s) URL with a host and nothing after the port. */
export function parseProxyUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("must be a URL such as http://127.0.0.1:8080.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidArgumentError("must be an http:// (or https://) URL.");
  if (!url.hostname) throw new InvalidArgumentError("must name a host.");
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash) {
    throw new InvalidArgumentError("must be just scheme://host:port (no path).");
  }
  return url.href.replace(/\/$/, "");
}

/** `http://[user:pass@]host:port` for a proxy listening on `address`. */
export function proxyUrlFor(address: { host: string; port: number }, proxyAuth?: string): string {
  const host = address.host === "0.0.0.0" ? "127.0.0.1" : address.host === "::" ? "::1" : address.host;
  return withCredentials(`http://${formatTarget({ host, port: address.port })}`, proxyAuth);
}

/** `url` with `user:password` credentials added, unless it has some already or `proxyAuth` is unset. */
export function withCredentials(url: string, proxyAuth: string | undefined): string {
  if (!proxyAuth) return url;
  const parsed = new URL(url);
  if (parsed.username || parsed.password) return url;
  ProxyAuth.parse(proxyAuth); // the same check as --proxy-auth on `start` (a UsageError, said on stderr)
  const colon = proxyAuth.indexOf(":");
  parsed.username = encodeURIComponent(proxyAuth.slice(0, colon));
  parsed.password = encodeURIComponent(proxyAuth.slice(colon + 1));
  return parsed.href.replace(/\/$/, "");
}

/**
 * The settings, in a stable order. `current` is the environment they will be applied to (NO_PROXY and
 * NODE_OPTIONS are derived from it). NO_PROXY/no_proxy are only touched when set; emptied ones are removed.
 */
export function clientSettings(input: ClientSettingsInput, current: NodeJS.ProcessEnv): Setting[] {
  const settings: Setting[] = [
    ["HTTPS_PROXY", input.proxyUrl],
    ["https_proxy", input.proxyUrl],
    ["HTTP_PROXY", input.proxyUrl],
    ["http_proxy", input.proxyUrl],
  ];
  if (current.NO_PROXY !== undefined || current.no_proxy !== undefined) {
    const cleaned = cleanNoProxy(current.NO_PROXY, current.no_proxy);
    const value = cleaned.length > 0 ? cleaned : null;
    settings.push(["NO_PROXY", value], ["no_proxy", value]);
  }
  settings.push(
    ["NODE_USE_ENV_PROXY", "1"],
    ["NODE_EXTRA_CA_CERTS", input.caCertPath],
    ["SSL_CERT_FILE", input.bundlePath],
    ["REQUESTS_CA_BUNDLE", input.bundlePath],
    ["CURL_CA_BUNDLE", input.bundlePath],
  );
  if (input.preload !== false) settings.push(["NODE_OPTIONS", withPreload(current.NODE_OPTIONS)]);
  return settings;
}

/** A copy of `env` with the settings applied. */
export function applySettings(env: NodeJS.ProcessEnv, settings: Setting[]): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of settings) {
    if (value === null) delete result[name];
    else result[name] = value;
  }
  return result;
}

export const SHELLS = ["sh", "fish", "powershell"] as const;
export type Shell = (typeof SHELLS)[number];

/** POSIX sh: single quotes, with `'` as `'\''`. */
export function quoteSh(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** fish: single quotes, where only `\\` and `\'` are escapes. */
export function quoteFish(value: string): string {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

/** PowerShell: single quotes, each quote doubled (it also treats the typographic ‘ ’ ‚ ‛ as quotes). */
export function quotePowerShell(value: string): string {
  return `'${value.replace(/['\u2018\u2019\u201a\u201b]/g, (q) => q + q)}'`;
}

export function renderSetting(shell: Shell, [name, value]: Setting): string {
  switch (shell) {
    case "sh":
      return value === null ? `unset ${name}` : `export ${name}=${quoteSh(value)}`;
    case "fish":
      return value === null ? `set -e ${name}` : `set -gx ${name} ${quoteFish(value)}`;
    case "powershell":
      return value === null ? `Remove-Item -ErrorAction SilentlyContinue Env:${name}` : `$env:${name} = ${quotePowerShell(value)}`;
  }
}

export function renderSettings(shell: Shell, settings: Setting[], comment?: string): string {
  const lines = settings.map((s) => renderSetting(shell, s));
  if (comment) lines.unshift(`# ${comment.replace(/[\r\n]+/g, " ")}`);
  return `${lines.join("\n")}\n`;
}
