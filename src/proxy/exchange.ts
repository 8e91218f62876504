import type { IncomingHttpHeaders } from "node:http";
import type { BodyTap } from "../body/body-tap.js";
import type { Charge } from "../budget/inspect-budget.js";

export type { BodyTap };

/**
 * One HTTP request/response pair seen by the proxy (mitmproxy's "flow").
 * The forwarder fills it in as the exchange progresses; addons read it and tap its bodies.
 * Taps receive copies of the bytes as they are forwarded: they can never delay or change them.
 */
export interface Exchange {
  /** Unique id of this exchange ("flow" in log records). */
  readonly id: string;
  readonly startedAt: number;
  /** How the request reached us. */
  readonly mode: ExchangeMode;
  readonly client: Peer & { tls: string | null };
  /** The real destination: the CONNECT target, absolute-URI host or reverse-mode upstream. */
  readonly server: ServerEndpoint;
  readonly request: RequestHead;
  /** Set when the response head arrives from upstream (or is synthesised by the proxy). */
  response: ResponseHead | null;
  /** Bytes of body forwarded so far, each way (as on the wire, before any decoding). */
  requestBytes: number;
  responseBytes: number;
  /** Set when the exchange failed (upstream refused, TLS error, client vanished, ...). */
  error: ExchangeError | null;
  /** Per-exchange scratch space for addons, keyed by addon name. */
  readonly notes: Map<string, unknown>;
  /** Receive a copy of every request body chunk from now on (call from `requestHeaders`). */
  tapRequest(tap: BodyTap): void;
  /** Receive a copy of every response body chunk from now on (call from `responseHeaders`). */
  tapResponse(tap: BodyTap): void;
  /**
   * Enforcement only (call from `requestHeaders`): hold the request body until `decide` settles, then
   * forward it (or a replacement), or answer the client without the upstream ever seeing the request.
   */
  holdRequest(hold: RequestHold): void;
  /** Enforcement only (call from `requestHeaders`): send this header upstream instead of the client's. */
  replaceRequestHeader(name: string, value: string): void;
  /** Enforcement only (call from `responseHeaders`): pass the response body through a rewriter. */
  rewriteResponse(rewriter: ResponseRewriter): ResponseRewriteHandle;
  /**
   * Back-pressure: stops reading this exchange's bodies from their senders (what is already read still goes
   * on, to the taps too) until the returned function is called. Nothing is dropped.
   */
  pauseReading(): () => void;
}

export interface RequestHold {
  maxBytes: number;
  /** What the held bytes are charged to (budget/inspect-budget.ts); none: nothing is charged. */
  charge?: Charge;
  /** `body` is null when it outgrew `maxBytes` (`why`: too_large) or the budget had no room for it (over_budget). */
  decide(body: Buffer | null, why?: "too_large" | "over_budget"): RequestVerdict | Promise<RequestVerdict>;
}

export type RequestVerdict = { action: "forward"; body?: Buffer } | { action: "respond"; response: SyntheticResponse };

export interface SyntheticResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type ResponseRewriter =
  /**
   * The whole body, held (up to `maxBytes`; null past it, then passed on unchanged); returns the new body
   * (sent as `application/json` without any content-encoding) or null to keep it.
   */
  /**
   * `rewrite(null)`: the body is too large to hold, or (`now`) refused on its head alone: what it returns goes out
   * at once instead of the body, which is not waited for (an event stream may never end).
   */
  /** `charge`: what the held body is charged to; `why` says whether a null body was too large or found no room in the budget. */
  | { kind: "whole"; maxBytes: number; charge?: Charge; now?: boolean; rewrite(body: Buffer | null, why?: "too_large" | "over_budget"): Buffer | null | Promise<Buffer | null> }
  /**
   * An event stream, one raw event at a time (with its blank line); returns the bytes to send instead.
   * `decode`: the body is content-coded; what the returned tap hands to `out` is framed instead, and the
   * client gets it as identity (no content-encoding).
   */
  | {
      kind: "events";
      maxEventBytes: number;
      /** What the bytes of an event not yet ended are charged to; past what it grants, the event is oversized (`over_budget`). */
      charge?: Charge;
      /**
       * A promise holds the stream behind the event until it settles: its judgement waits for shared state, or
       * the event is held (`--intercept`). The events after it wait for it, in order, and the upstream is not
       * read meanwhile.
       */
      event(raw: Buffer): Buffer | Promise<Buffer>;
      oversized?(why: "too_large" | "over_budget"): void;
      /** When given, an event larger than maxEventBytes is not passed on: this is written in its place, at its end. */
      oversizedEnd?(): Buffer | Promise<Buffer>;
      decode?(out: DecodedOutput): BodyTap;
    };

export interface DecodedOutput {
  data(chunk: Buffer): void;
  end(): void;
}

export interface ResponseRewriteHandle {
  /** Events only: sends bytes to the client at the next event boundary. */
  inject(raw: Buffer): void;
}

export type ExchangeMode = "mitm" | "plain-connect" | "plain-proxy" | "reverse";

export interface Peer {
  address: string;
  port: number;
}

export interface ServerEndpoint {
  host: string;
  port: number;
  /** true when the proxy→server leg is TLS. */
  secure: boolean;
  /** TLS version of the proxy→server leg once connected, e.g. "TLSv1.3". */
  tls: string | null;
  /** Upstream certificate verification was switched off by --insecure-upstream. */
  insecure: boolean;
}

export interface RequestHead {
  method: string;
  /** Origin-form path with query, e.g. "/mcp?x=1". */
  path: string;
  httpVersion: string;
  /** Lower-cased header names, as node:http parses them. */
  headers: IncomingHttpHeaders;
  /** The header lines as received (name, value, name, value...): node keeps only the first of some repeated fields. */
  rawHeaders?: readonly string[];
}

export interface ResponseHead {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
  /** The upstream's header lines as received (name, value, ...); absent for the proxy's own responses. */
  rawHeaders?: readonly string[];
  /** Who produced it: the upstream, or the proxy itself (errors, policy denials). */
  source: "upstream" | "proxy";
}

/** Why an exchange failed; the `error.code` of `http` records (docs/log-format.md lists them). */
export type ExchangeErrorCode =
  | "upstream_tls"
  | "upstream_dns"
  | "upstream_connect"
  | "upstream_timeout"
  | "upstream_reset"
  | "upstream_error"
  /** The client went away first. */
  | "client_aborted"
  /** The proxy stopped before the exchange was complete. */
  | "shutdown";

export interface ExchangeError {
  code: ExchangeErrorCode;
  message: string;
  /** The TLS error code of a failed upstream handshake, e.g. "CERT_HAS_EXPIRED". */
  tlsError?: string;
}


/** CONNECT-level facts, for tunnels the proxy does not decrypt and for refused targets. */
export interface TunnelInfo {
  readonly id: string;
  readonly client: Peer;
  readonly target: { host: string; port: number };
  readonly startedAt: number;
}

/**
 * Addons see every exchange, in registration order (mitmproxy's addon model). Hooks must not throw;
 * the pipeline catches and logs anything that does, and forwarding carries on regardless.
 */
export interface Addon {
  readonly name: string;
  requestHeaders?(ex: Exchange): void;
  responseHeaders?(ex: Exchange): void;
  /**
   * Both bodies are complete (or the exchange failed): the last hook an exchange gets. Work it finishes later
   * returns a promise: its failure is reported like a throw.
   */
  exchangeEnd?(ex: Exchange): void | Promise<void>;
  /** A tunnel the proxy passed through without decrypting has closed. */
  tunnelEnd?(t: TunnelInfo, stats: { bytesUp: number; bytesDown: number; error: string | null }): void;
  /** Called once at shutdown, after the listeners are closed: report what is still open. */
  close?(): void | Promise<void>;
}
