import { isIPv6 } from "node:net";

/** `host:port`, an IPv6 literal in brackets (`[::1]:8443`): how every record names a server. */
export function formatHostPort(host: string, port: number): string {
  return `${isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** A client or peer as records write it: `address:port`, an IPv6 address in brackets (`[::1]:51234`). */
export function formatPeer(peer: { address: string; port: number }): string {
  return formatHostPort(peer.address, peer.port);
}
