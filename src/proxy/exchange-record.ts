import { randomUUID } from "node:crypto";
import type {
  BodyTap,
  Exchange,
  ExchangeError,
  ExchangeMode,
  Peer,
  RequestHead,
  ResponseHead,
  ServerEndpoint,
} from "./exchange.js";

/** The mutable record behind the `Exchange` view that addons get. */
export class ExchangeRecord implements Exchange {
  readonly id = randomUUID();
  readonly startedAt = Date.now();
  readonly notes = new Map<string, unknown>();
  response: ResponseHead | null = null;
  requestBytes = 0;
  responseBytes = 0;
  error: ExchangeError | null = null;
  endedAt: number | null = null;
  readonly requestTaps: BodyTap[] = [];
  readonly responseTaps: BodyTap[] = [];

  constructor(
    readonly mode: ExchangeMode,
    readonly client: Peer & { tls: string | null },
    readonly server: ServerEndpoint,
    readonly request: RequestHead,
  ) {}

  tapRequest(tap: BodyTap): void {
    this.requestTaps.push(tap);
  }

  tapResponse(tap: BodyTap): void {
    this.responseTaps.push(tap);
  }

  /** Keeps the first failure: later ones are consequences of it. */
  fail(error: ExchangeError): void {
    this.error ??= error;
  }
}
