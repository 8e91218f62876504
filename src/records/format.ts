import { formatHostPort } from "../util/host-port.js";

export { formatHostPort };

/** A client or peer as records write it: `address:port`, an IPv6 address in brackets (`[::1]:51234`). */
export function formatPeer(peer: { address: string; port: number }): string {
  return formatHostPort(peer.address, peer.port);
}
