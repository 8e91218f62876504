import type { Logger } from "../log/logger.js";
import { redactHeaders, redactUrlQuery } from "../log/redact.js";
import { formatHostPort, formatPeer } from "./format.js";

type Headers = Record<string, string | string[] | undefined>;

/** What the `http` record reads of an exchange (the proxy's `Exchange`; records do not import the proxy). */
export interface EndedExchange {
  id: string;
  mode: string;
  startedAt: number;
  endedAt?: number | null;
  client: { address: string; port: number; tls: string | null };
  server: { host: string; port: number; secure: boolean; tls: string | null; insecure: boolean };
  request: { method: string; path: string; httpVersion: string; headers: Headers };
  response: { status: number; source: string; headers: Headers } | null;
  requestBytes: number;
  responseBytes: number;
  error: { code: string } | null;
}

/** One `event: "http"` record per exchange, written when the exchange ends. */
export function httpRecordAddon(logger: Logger): { name: string; exchangeEnd(ex: EndedExchange): void } {
  return {
    name: "http-record",
    exchangeEnd(ex: EndedExchange) {
      const failed = ex.error !== null && ex.error.code !== "client_aborted";
      // Credentials the client sent are removed by value where they come back (an echoing WWW-Authenticate)
      // by the log sink's ExchangeSecrets, as from every record of the exchange.
      logger[failed ? "warn" : "info"]({
        event: "http",
        flow: ex.id,
        mode: ex.mode,
        client: formatPeer(ex.client),
        server: formatHostPort(ex.server.host, ex.server.port),
        method: ex.request.method,
        path: redactUrlQuery(ex.request.path),
        status: ex.response?.status ?? null,
        statusSource: ex.response?.source ?? null,
        requestBytes: ex.requestBytes,
        responseBytes: ex.responseBytes,
        durationMs: (ex.endedAt ?? Date.now()) - ex.startedAt,
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
