import { randomUUID } from "node:crypto";
import type {
  BodyTap,
  RequestHold,
  ResponseRewriteHandle,
  ResponseRewriter,
  Exchange,
  ExchangeError,
  ExchangeMode,
  Peer,
  RequestHead,
  ResponseHead,
  ServerEndpoint,
} from "./exchange.js";
import { ReadGate } from "./read-gate.js";
import type { ReadTurn } from "./read-scheduler.js";

/** How one direction's body is read: the gate its reader obeys, and where its loop time is charged. */
export interface BodyRead {
  /** Closed while the exchange's gate or its sender's turn is. */
  readonly gate: ReadGate;
  /** The sender's turn alone: its gate, what its paused sources hold, where loop time is charged (read-scheduler.ts). */
  readonly turn?: ReadTurn;
}

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
  requestHold: RequestHold | null = null;
  responseRewriter: ResponseRewriter | null = null;
  /** Bytes to inject into an event stream, and the function that sends them once the stream is set up. */
  readonly injected: Buffer[] = [];
  injectNow: ((raw: Buffer) => void) | null = null;
  /** Closed while the bodies must not be read (`pauseReading`). */
  readonly readGate = new ReadGate();
  /** Each body's reading: the exchange's gate alone, unless the forwarder schedules reads by peer (read-scheduler.ts). */
  requestRead: BodyRead = { gate: this.readGate };
  responseRead: BodyRead = { gate: this.readGate };

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

  readonly replacedRequestHeaders = new Map<string, string>();

  replaceRequestHeader(name: string, value: string): void {
    this.replacedRequestHeaders.set(name.toLowerCase(), value);
  }

  holdRequest(hold: RequestHold): void {
    this.requestHold = hold;
  }

  rewriteResponse(rewriter: ResponseRewriter): ResponseRewriteHandle {
    this.responseRewriter = rewriter;
    return { inject: (raw) => (this.injectNow ? this.injectNow(raw) : this.injected.push(raw)) };
  }

  pauseReading(): () => void {
    return this.readGate.hold();
  }

  /** Keeps the first failure: later ones are consequences of it. */
  fail(error: ExchangeError): void {
    this.error ??= error;
  }
}
