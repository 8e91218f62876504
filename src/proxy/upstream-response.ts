import type http from "node:http";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { AddonChain } from "./addon-chain.js";
import type { ExchangeLegs } from "./exchange-teardown.js";
import type { ForwardRoute } from "./forward.js";
import { sendResponse } from "./response-writer.js";
import { formatTarget } from "./target.js";
import type { UpgradeLeg, UpgradeStats } from "./upgrade.js";
import { classifyUpstreamError } from "./upstream-error.js";
import { charged } from "./scheduled-reads.js";

/** The upstream's answer: its head to the addons, its body to the client (and a copy to the taps). */
export function receiveResponse(legs: ExchangeLegs, addons: AddonChain, route: ForwardRoute, upRes: http.IncomingMessage, leg?: UpgradeLeg): void {
  // The head's work is its server's cost.
  charged(legs.ex.responseRead, () => receive(legs, addons, route, upRes, leg));
}

function receive(legs: ExchangeLegs, addons: AddonChain, route: ForwardRoute, upRes: http.IncomingMessage, leg?: UpgradeLeg): void {
  const { ex, res } = legs;
  const server = formatTarget(route.target);
  legs.upstreamResponse = upRes;
  leg?.ordinary();
  if (route.secure) noteUpstreamTls(legs, upRes.socket);
  ex.response = { status: upRes.statusCode ?? 502, statusMessage: upRes.statusMessage ?? "", headers: upRes.headers, rawHeaders: upRes.rawHeaders, source: "upstream" };
  addons.responseHeaders(ex);
  legs.responseTaps = addons.fanOut("response-tap", ex.responseTaps);
  upRes.on("error", (err: NodeJS.ErrnoException) => {
    ex.fail(classifyUpstreamError(err, server));
    res.destroy();
  });
  upRes.on("aborted", () => ex.fail({ code: "upstream_reset", message: `${server}: response ended before it was complete` }));
  sendResponse(ex, upRes, res, legs.responseTaps);
}

/**
 * The upstream answered 101: the exchange ends here on the record (`end`), and the connection becomes a raw
 * pipe (`leg`), whose end `done` reports.
 */
export function receiveSwitch(
  legs: ExchangeLegs,
  addons: AddonChain,
  route: ForwardRoute,
  switchedTo: { upRes: http.IncomingMessage; socket: Duplex; head: Buffer },
  leg: UpgradeLeg,
  done: (stats: UpgradeStats) => void,
  end: () => void,
): void {
  const { ex } = legs;
  const { upRes, socket, head } = switchedTo;
  legs.upstreamResponse = upRes;
  if (route.secure) noteUpstreamTls(legs, socket);
  ex.response = { status: upRes.statusCode ?? 101, statusMessage: upRes.statusMessage ?? "", headers: upRes.headers, rawHeaders: upRes.rawHeaders, source: "upstream" };
  addons.responseHeaders(ex);
  legs.responseTaps = addons.fanOut("response-tap", ex.responseTaps);
  leg.switched(upRes, socket, head, done);
  end();
}

/** The TLS version of the proxy→server leg, on the record. */
function noteUpstreamTls(legs: ExchangeLegs, socket: Duplex | null): void {
  const tlsSocket = socket as TLSSocket | null;
  if (tlsSocket && typeof tlsSocket.getProtocol === "function") (legs.ex.server as { tls: string | null }).tls = tlsSocket.getProtocol();
}
