import type { BodyDecoderTap } from "../body/index.js";
import type { Exchange, ResponseRewriteHandle } from "../proxy/exchange.js";
import { headerValue } from "../proxy/headers.js";
import { formatTarget } from "../proxy/target.js";
import type { LegacySession } from "./legacy-endpoints.js";
import type { Direction } from "./correlator.js";
import type { Judged, MessageContext, Transport } from "./rpc-event.js";
import type { TrackedContext } from "./tracker.js";
import { STATELESS_REVISION } from "./stateless-headers.js";

/** What the MCP addon knows about one exchange. */
export class McpFlow {
  isMcp: boolean;
  transport: Transport;
  session: string | null;
  assignedSession: string | null = null;
  /** The response stream carried SSE event ids: an unanswered request may still be answered on a later GET. */
  resumable = false;
  requestDecoder: BodyDecoderTap | null = null;
  /** The request body is read as JSON although its content type (this) says otherwise: lenient servers do. */
  sniffedType: string | null = null;
  readonly decoding: Promise<void>[] = [];
  /** Enforce mode: what decoding the client's body returned, its messages with their decisions, once it is done. */
  requestJudgements: Promise<Judged[]> = Promise.resolve([]);
  /** Enforce mode: why the event stream, as the proxy decoded it for the client, may read otherwise (its coding). */
  streamAmbiguity: string | null = null;
  /** Enforce mode: why the event being judged now may read otherwise to a client (its charset, a hidden line break). */
  eventDoubt: string | null = null;
  /** Enforce mode: why every message of the request body may read otherwise to the server (two Content-Type lines). */
  requestHeaderDoubt: string | null = null;
  /**
   * Why the request body could not be read, kept while the exchange is not yet known to be MCP: recorded as
   * soon as the answer shows it is, so a request that may have run is never without a record.
   */
  unrecordedRequestProblem: { why: string; bytes: number } | null = null;
  /** Enforce mode: the response body was not passed on, its content type being neither JSON nor an event stream. */
  refusedResponse = false;
  /** Enforce mode: writes into this exchange's event stream. */
  injector: ResponseRewriteHandle | null = null;
  /** The client's `address:port`, as `http` records and spans name it. */
  readonly client: string;

  constructor(
    readonly ex: Exchange,
    readonly server: string,
    readonly hinted: boolean,
    public legacy: LegacySession | undefined,
  ) {
    this.client = formatTarget({ host: ex.client.address, port: ex.client.port });
    this.isMcp = hinted;
    this.transport = legacy ? "http+sse" : "streamable-http";
    // The stateless revision (2026-07-28) has no sessions: its servers never read `Mcp-Session-Id`, so a value
    // the client invents names nothing (and must not buy it a rate-limit budget of its own).
    const version = headerValue(ex.request.headers["mcp-protocol-version"]);
    const stateless = version !== undefined && version >= STATELESS_REVISION;
    this.session = legacy?.endpointPath ?? (stateless ? null : (headerValue(ex.request.headers["mcp-session-id"]) ?? null));
  }

  /** Correlation scope: the session, or the exchange itself when there is none. */
  get scope(): string {
    return this.session ?? `flow:${this.ex.id}`;
  }

  /** Where a message of this exchange was seen, travelling `direction`. */
  context(direction: Direction, extra: Partial<MessageContext> = {}): TrackedContext {
    return {
      flow: this.ex.id,
      transport: this.transport,
      server: this.server,
      client: this.client,
      path: this.ex.request.path,
      session: this.session,
      protocolVersion: headerValue(this.ex.request.headers["mcp-protocol-version"]) ?? null,
      direction,
      scope: this.scope,
      assignedSession: this.assignedSession,
      ...(this.ex.server.insecure ? { insecureUpstream: true } : {}),
      ...extra,
    };
  }
}
