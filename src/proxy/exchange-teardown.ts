import type http from "node:http";
import type { AddonChain, TapFanOut } from "./addon-chain.js";
import type { ExchangeRecord } from "./exchange-record.js";
import { charged } from "./scheduled-reads.js";

/** The moving parts of one exchange in flight, shared by the forwarder's pieces. */
export interface ExchangeLegs {
  readonly ex: ExchangeRecord;
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  readonly requestTaps: TapFanOut;
  responseTaps: TapFanOut;
  upstreamRequest: http.ClientRequest | null;
  upstreamResponse: http.IncomingMessage | null;
}

/**
 * Ends the exchange once, when the client's response closes (or earlier, through the returned function, when
 * the connection switched protocols): the taps end (or abort with the exchange's error), then the addons see
 * `exchangeEnd`. A response closed before it was complete is the client's doing: `client_aborted`, and both
 * upstream legs are torn down. `ended`: told once, after.
 */
export function endWithResponse(legs: ExchangeLegs, addons: AddonChain, ended?: () => void): () => void {
  const { ex, req, res } = legs;
  let done = false;
  const end = (): void => {
    if (done) return;
    done = true;
    try {
      // The exchange's records are its client's cost.
      charged(ex.requestRead, () => {
        if (ex.error) {
          legs.requestTaps.abort(ex.error);
          legs.responseTaps.abort(ex.error);
        } else {
          legs.requestTaps.end();
          legs.responseTaps.end();
        }
        ex.endedAt = Date.now();
        addons.exchangeEnd(ex);
      });
    } finally {
      // Whatever threw above, the exchange leaves the read scheduler (its peers' entries would stay for good).
      ended?.();
    }
  };
  res.on("close", () => {
    if (!res.writableFinished) {
      ex.fail({
        code: "client_aborted",
        message: req.complete
          ? "client closed the connection before the response was complete"
          : "client closed the connection before the request body was complete",
      });
      legs.upstreamRequest?.destroy();
      legs.upstreamResponse?.destroy();
    }
    end();
  });
  return end;
}
