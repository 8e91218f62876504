import { isIPv6 } from "node:net";

/** `host:port`, an IPv6 literal in brackets (`[::1]:8443`): how records and messages name a server. */
export function formatHostPort(host: string, port: number): string {
  return `${isIPv6(host) ? `[${host}]` : host}:${port}`;
}
