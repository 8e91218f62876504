import type { Exchange } from "./exchange.js";
import { formatTarget } from "./target.js";

/**
 * Who sent a body, as the proxy shares its resources out (the inspection budget, the event loop): a request
 * body the client that sent it (by address: every connection of one host is one peer), a response body the
 * upstream server that sent it (host and port). One hostile client, or one hostile server, spends its own
 * share and no one else's.
 */
export function peerKey(ex: Pick<Exchange, "client" | "server">, direction: "client_to_server" | "server_to_client"): string {
  return direction === "client_to_server" ? `client ${ex.client.address}` : `server ${formatTarget(ex.server)}`;
}
