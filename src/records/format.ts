import { isIPv6 } from "node:net";

/** `host:port`, an IPv6 literal in brackets (`[::1]:8443`): how every record names a server. */
export function formatHostPort(host: string, port: number): string {
  return `${isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** A client or peer as records write it: `address:port` (docs/log-format.md, common fields). */
export function formatPeer(peer: { address: string; port: number }): string {
  return `${peer.address}:${peer.port}`;
}
