import type { Direction } from "./correlator.js";

/**
 * Whose share of a table an entry is charged to (src/bounds/shared-table.ts), named as the inspection budget
 * names peers (proxy/peer-key.ts): a client by address (every connection of one host is one peer; over stdio,
 * the one client of that server), a server by host and port (over stdio, its name).
 */
export function serverPeer(server: string): string {
  return `server ${server}`;
}

/** `client` is the `address:port` (`[v6]:port`) of an HTTP exchange's client; absent over stdio. */
export function clientPeer(client: string | undefined, server: string): string {
  if (client === undefined) return `client stdio:${server}`;
  const address = client.startsWith("[") ? client.slice(1, client.indexOf("]")) : client.slice(0, client.lastIndexOf(":"));
  return `client ${address}`;
}

/** The peer that sent a message travelling `direction`. */
export function senderPeer(ctx: { direction: Direction; client?: string | undefined; server: string }): string {
  return ctx.direction === "client_to_server" ? clientPeer(ctx.client, ctx.server) : serverPeer(ctx.server);
}
