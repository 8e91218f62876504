import { isIPv4, isIPv6 } from "node:net";
import { formatHostPort } from "../util/host-port.js";
import { readIpv4, readIpv6 } from "../util/ip-literal.js";

/** A validated destination. `host` is lower-case, IPv6 without brackets. */
export interface Target {
  host: string;
  port: number;
}

/** `leafHost`: the host as the client spelled it, which a TLS client checks the proxy's leaf against. */
export type TargetResult = { ok: true; target: Target; leafHost: string } | { ok: false; reason: string };
export type HostResult = { ok: true; host: string; leafHost: string } | { ok: false; reason: string };

const MAX_HOSTNAME_LENGTH = 253;
const DNS_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * Validates a host (DNS name or IP literal, IPv6 with or without brackets). An IP literal is read as the
 * address it routes to, in one spelling (util/ip-literal.ts): policy judges the server the proxy reaches.
 */
export function validateHost(raw: string): HostResult {
  if (raw.length === 0) return { ok: false, reason: "empty host" };
  if (raw.length > MAX_HOSTNAME_LENGTH + 2) return { ok: false, reason: "host name too long" };
  let host = raw.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) {
    host = host.slice(1, -1);
    return isIPv6(host) ? readIpv6(host) : { ok: false, reason: "invalid IPv6 literal" };
  }
  if (isIPv6(host)) return readIpv6(host);
  if (isIPv4(host)) return readIpv4(host);
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (host.length === 0 || host.length > MAX_HOSTNAME_LENGTH) return { ok: false, reason: "host name too long" };
  const labels = host.split(".");
  if (!labels.every((label) => DNS_LABEL.test(label))) {
    return { ok: false, reason: "host is not a valid DNS name or IP address" };
  }
  // A name whose last label is a number (decimal or 0x-hex) is no DNS name: the resolver reads it as an IPv4
  // literal in inet_aton's forms (0x7f.1, 0x7f000001, 1.2.3.0x4 all reach 127.0.0.1 / 1.2.3.4), so policy
  // would judge one host while the proxy connects to another. Refused, like 999.1.1.1 (WHATWG URL does the same).
  if (/^(?:\d+|0x[0-9a-f]*)$/.test(labels.at(-1)!)) return { ok: false, reason: "invalid IPv4 literal" };
  return { ok: true, host, leafHost: host };
}

export function validatePort(raw: string): number | null {
  if (!/^\d{1,5}$/.test(raw)) return null;
  const port = Number(raw);
  return port >= 1 && port <= 65535 ? port : null;
}

/** Parses the authority-form target of a CONNECT request: `host:port`, `[v6]:port`. */
export function parseConnectTarget(authority: string): TargetResult {
  if (authority.length > MAX_HOSTNAME_LENGTH + 8) return { ok: false, reason: "target too long" };
  const split = splitHostPort(authority);
  if (!split || split.port === undefined) return { ok: false, reason: "target must be host:port" };
  const port = validatePort(split.port);
  if (port === null) return { ok: false, reason: "port must be 1-65535" };
  const host = validateHost(split.host);
  return host.ok ? { ok: true, target: { host: host.host, port }, leafHost: host.leafHost } : host;
}

/** Parses a Host header value; the port is optional. */
export function parseHostHeader(value: string, defaultPort: number): TargetResult {
  const split = splitHostPort(value.trim());
  if (!split) return { ok: false, reason: "malformed Host header" };
  const port = split.port === undefined ? defaultPort : validatePort(split.port);
  if (port === null) return { ok: false, reason: "bad port in Host header" };
  const host = validateHost(split.host);
  return host.ok ? { ok: true, target: { host: host.host, port }, leafHost: host.leafHost } : host;
}

function splitHostPort(value: string): { host: string; port: string | undefined } | null {
  if (value.startsWith("[")) {
    const close = value.indexOf("]");
    if (close < 0) return null;
    const rest = value.slice(close + 1);
    if (rest === "") return { host: value.slice(0, close + 1), port: undefined };
    if (!rest.startsWith(":")) return null;
    return { host: value.slice(0, close + 1), port: rest.slice(1) };
  }
  const colon = value.lastIndexOf(":");
  if (colon < 0) return { host: value, port: undefined };
  // More than one colon without brackets: a bare IPv6 literal has no room for a port.
  if (value.indexOf(":") !== colon) return null;
  return { host: value.slice(0, colon), port: value.slice(colon + 1) };
}

/** `host:port` for logs and policy, with IPv6 bracketed. */
export function formatTarget(t: Target): string {
  return formatHostPort(t.host, t.port);
}
