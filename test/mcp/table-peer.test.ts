/**
 * One peer, one name: the inspection budget and the read scheduler name a body's sender from its exchange
 * (proxy/peer-key.ts), the tables and the sliced scans from a message's context (mcp/table-peer.ts). Were
 * the two to differ, one client would hold two shares.
 */
import { describe, expect, it } from "vitest";
import { senderPeer } from "../../src/mcp/table-peer.js";
import { peerKey } from "../../src/proxy/peer-key.js";
import { formatTarget } from "../../src/proxy/target.js";

describe("a peer's name", () => {
  it("is the same from an exchange and from a message's context, for IPv4 and IPv6 clients and servers", () => {
    for (const [address, host] of [["127.0.0.2", "127.0.0.1"], ["::1", "::1"], ["::ffff:10.0.0.7", "api.example.com"]] as const) {
      const ex = { client: { address, port: 50_123 }, server: { host, port: 8443 } };
      const context = { client: formatTarget({ host: address, port: 50_123 }), server: formatTarget(ex.server) };
      expect(senderPeer({ direction: "client_to_server", ...context })).toBe(peerKey(ex as never, "client_to_server"));
      expect(senderPeer({ direction: "server_to_client", ...context })).toBe(peerKey(ex as never, "server_to_client"));
    }
  });
});
