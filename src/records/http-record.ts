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

/** Settles once the credentials of an exchange's bodies are known; undefined when none is being read. */
export type CredentialsKnown = (flow: string) => Promise<void> | undefined;

/** Longest wait at shutdown for records waiting on a body's credentials. */
const CLOSE_GRACE_MS = 1_000;

/**
 * One `event: "http"` record per exchange, written when the exchange ends, or once the credentials its
 * bodies carried are known when they are still being read (`known`).
 */
export function httpRecordAddon(
  logger: Logger,
  known: CredentialsKnown = () => undefined,
): { name: string; exchangeEnd(ex: EndedExchange): void; close(): Promise<void> } {
  const pending = new Set<Promise<void>>();
  return {
    name: "http-record",
    exchangeEnd(ex: EndedExchange) {
      const failed = ex.error !== null && ex.error.code !== "client_aborted";
      const record = httpRecord(ex);
      const write = (): void => void logger[failed ? "warn" : "info"](record);
      const reading = known(ex.id);
      if (!reading) return write();
      const written = reading.then(write);
      pending.add(written);
      void written.finally(() => pending.delete(written));
    },
    async close() {
      const grace = new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
      await Promise.race([Promise.allSettled([...pending]), grace]);
    },
  };
}

/**
 * Credentials the client sent (headers, query, bodies) are removed by value where they come back (an
 * echoing WWW-Authenticate, a Location) by the log sink's ExchangeSecrets, as from every record of the exchange.
 */
function httpRecord(ex: EndedExchange): Record<string, unknown> {
  return {
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
  };
}
