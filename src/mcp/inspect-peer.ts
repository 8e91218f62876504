import type { Exchange } from "../proxy/exchange.js";
import { formatTarget } from "../proxy/target.js";

/**
 * Whose share of the inspection budget a body is charged to: a request body to the client that sent it (by
 * address: every connection of one host is one peer), a response body to the upstream server that sent it
 * (host and port). One hostile client, or one hostile server, spends its own share and no one else's.
 */
export function inspectPeer(ex: Exchange, direction: "client_to_server" | "server_to_client"): string {
  return direction === "client_to_server" ? `client ${ex.client.address}` : `server ${formatTarget(ex.server)}`;
}
