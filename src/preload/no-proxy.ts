/**
 * NO_PROXY matching, as undici's EnvHttpProxyAgent and curl do it: entries separated by commas or spaces;
 * `*` bypasses the proxy for everything; `name`, `.name` and `*.name` match the name and its subdomains;
 * `name:port` only that port; IPv6 addresses with or without brackets.
 *
 * Part of the preload: runs on Node 20, imports nothing from the rest of the package.
 */
import { bareHost } from "./tunnel.js";

export interface NoProxyEntry {
  host: string;
  port: number | null;
}

export type NoProxy = "all" | NoProxyEntry[];

export function parseNoProxy(value: string | undefined): NoProxy {
  const entries: NoProxyEntry[] = [];
  for (const raw of (value ?? "").split(/[,\s]+/)) {
    const item = raw.trim().toLowerCase();
    if (item.length === 0) continue;
    if (item === "*") return "all";
    let host = item;
    let port: number | null = null;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
    if (bracketed) {
      host = bracketed[1]!;
      port = bracketed[2] ? Number(bracketed[2]) : null;
    } else {
      const hostPort = /^([^:]+):(\d+)$/.exec(item);
      if (hostPort) {
        host = hostPort[1]!;
        port = Number(hostPort[2]);
      }
    }
    host = host.replace(/^\*/, "").replace(/^\./, "");
    if (host.length > 0) entries.push({ host, port });
  }
  return entries;
}

export function bypassesProxy(noProxy: NoProxy, host: string, port: number): boolean {
  if (noProxy === "all") return true;
  const name = bareHost(host.toLowerCase()).replace(/\.$/, "");
  return noProxy.some((e) => (e.port === null || e.port === port) && (name === e.host || name.endsWith(`.${e.host}`)));
}
