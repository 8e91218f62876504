import type { Addon, Exchange } from "../proxy/exchange.js";
import { formatTarget } from "../proxy/target.js";
import type { ExchangeRecord } from "../proxy/exchange-record.js";
import type { Logger } from "../log/logger.js";
import { redactHeaders, redactUrlQuery } from "../log/redact.js";

/** One `event: "http"` record per exchange, written when the exchange ends. */
export function httpRecordAddon(logger: Logger): Addon {
  return {
    name: "http-record",
    exchangeEnd(ex: Exchange) {
      const record = ex as ExchangeRecord;
      const failed = ex.error !== null && ex.error.code !== "client_aborted";
      // Credentials the client sent are removed by value where they come back (an echoing WWW-Authenticate)
      // by the log sink's ExchangeSecrets, as from every record of the exchange.
      logger[failed ? "warn" : "info"]({
        event: "http",
        flow: ex.id,
        mode: ex.mode,
        client: `${ex.client.address}:${ex.client.port}`,
        server: formatTarget(ex.server),
        method: ex.request.method,
        path: redactUrlQuery(ex.request.path),
        status: ex.response?.status ?? null,
        statusSource: ex.response?.source ?? null,
        requestBytes: ex.requestBytes,
        responseBytes: ex.responseBytes,
        durationMs: (record.endedAt ?? Date.now()) - ex.startedAt,
        tls: ex.server.secure || ex.client.tls ? { client: ex.client.tls, server: ex.server.tls } : null,
        httpVersion: ex.request.httpVersion,
        requestHeaders: redactHeaders(ex.request.headers),
        responseHeaders: ex.response ? redactHeaders(ex.response.headers) : null,
        ...(ex.server.insecure ? { insecureUpstream: true } : {}),
        ...(ex.error ? { error: ex.error } : {}),
      });
    },
  };
}
