/**
 * The HTTP side of `mcp-wiretap bridge`: a Streamable HTTP client (MCP 2025-03-26 and later) that sends each
 * message the stdio client wrote as a POST, and hands back every message of the answers, JSON or SSE, and of
 * the server's own GET stream, one line each. Its requests go through the proxy (the dispatcher given), so
 * every message is recorded and judged there before it reaches either side.
 */
import { type Dispatcher, fetch } from "undici";
import { answerWithError, causeOf, delay, isObject, isRequest, readEvents, readText } from "./http-messages.js";

export interface BridgeClientOptions {
  url: string;
  /** Headers of the server entry (credentials): sent on every request, never written anywhere else. */
  headers: Record<string, string>;
  dispatcher: Dispatcher;
  /** One JSON-RPC message for the stdio client, without its newline. */
  deliver(line: string): void;
  /** A problem for the user's eyes (stderr): never a message of the protocol. */
  warn(text: string): void;
  /** Longest answer body read, in bytes (a bigger one is cut off and its request answered with an error). */
  maxBodyBytes: number;
  /** Resolves once the stdio client has taken what was delivered so far (back-pressure). */
  ready?: () => Promise<void>;
}

export class StreamableClient {
  private session: string | undefined;
  private protocolVersion: string | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private getStream: AbortController | undefined;

  constructor(private readonly o: BridgeClientOptions) {}

  /** Sends one message (a parsed JSON-RPC object or batch); resolves when its answer has been handed back. */
  send(message: unknown): Promise<void> {
    const done = this.post(message).finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
    return done;
  }

  /** Waits (bounded) for answers still coming, closes the GET stream and ends the session on the server. */
  async close(timeoutMs = 5_000): Promise<void> {
    await Promise.race([Promise.allSettled([...this.inFlight]), delay(timeoutMs)]);
    this.getStream?.abort();
    if (this.session === undefined) return;
    await fetch(this.o.url, { method: "DELETE", headers: this.headers(), dispatcher: this.o.dispatcher, signal: AbortSignal.timeout(2_000) })
      .then((r) => r.body?.cancel())
      .catch(() => undefined); // the session ends with its timeout on the server anyway
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      ...this.o.headers,
      ...(this.session !== undefined ? { "mcp-session-id": this.session } : {}),
      ...(this.protocolVersion !== undefined ? { "mcp-protocol-version": this.protocolVersion } : {}),
      ...extra,
    };
  }

  private async post(message: unknown): Promise<void> {
    const requests = (Array.isArray(message) ? message : [message]).filter(isRequest);
    const failAll = (why: string): void => {
      this.o.warn(why);
      for (const r of requests) this.o.deliver(answerWithError(r.id, why));
    };
    let response;
    try {
      response = await fetch(this.o.url, {
        method: "POST",
        headers: this.headers({ "content-type": "application/json", accept: "application/json, text/event-stream" }),
        body: JSON.stringify(message),
        dispatcher: this.o.dispatcher,
      });
    } catch (error) {
      failAll(`cannot reach ${this.o.url}: ${causeOf(error)}`);
      return;
    }
    const session = response.headers.get("mcp-session-id");
    if (session !== null && this.session === undefined) this.session = session;
    const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!response.ok) {
      await response.body?.cancel();
      failAll(`the server answered HTTP ${response.status}${response.status === 404 && this.session !== undefined ? " (its session has ended)" : ""}`);
      return;
    }
    const answered = new Set<unknown>();
    const hand = (value: unknown): void => {
      for (const one of Array.isArray(value) ? value : [value]) {
        if (!isObject(one)) continue; // not a message: recorded by the proxy as invalid, not handed on
        if ("result" in one || "error" in one) answered.add(one.id);
        this.noteVersion(one, requests);
        this.o.deliver(JSON.stringify(one));
      }
    };
    try {
      if (type === "text/event-stream") await readEvents(response.body, this.o.maxBodyBytes, (event) => event.name === "message" && hand(JSON.parse(event.data)), this.o.ready);
      else if (type === "application/json") hand(JSON.parse(await readText(response.body, this.o.maxBodyBytes)));
      else await response.body?.cancel();
    } catch (error) {
      this.o.warn(`an answer from ${this.o.url} could not be read: ${causeOf(error)}`);
    }
    const unanswered = requests.filter((r) => !answered.has(r.id));
    if (unanswered.length > 0 && response.status !== 202) {
      for (const r of unanswered) this.o.deliver(answerWithError(r.id, "the server's answer ended without a response to this request"));
    }
    if (requests.some((r) => r.method === "initialize") && this.session !== undefined) this.openGetStream();
  }

  /** After initialize: the version the server chose goes on every later request, as the spec asks. */
  private noteVersion(message: unknown, requests: Array<{ id: unknown; method: unknown }>): void {
    if (!isObject(message) || !isObject(message.result)) return;
    const request = requests.find((r) => r.id === message.id);
    if (request?.method === "initialize" && typeof message.result.protocolVersion === "string") this.protocolVersion = message.result.protocolVersion;
  }

  /** The server's own stream (notifications, requests to the client); a 405 means it has none. */
  private openGetStream(): void {
    if (this.getStream) return;
    const abort = new AbortController();
    this.getStream = abort;
    void (async () => {
      try {
        const response = await fetch(this.o.url, { method: "GET", headers: this.headers({ accept: "text/event-stream" }), dispatcher: this.o.dispatcher, signal: abort.signal });
        if (!response.ok || !(response.headers.get("content-type") ?? "").toLowerCase().startsWith("text/event-stream")) {
          await response.body?.cancel();
          return;
        }
        await readEvents(response.body, this.o.maxBodyBytes, (event) => {
          if (event.name !== "message") return;
          const value: unknown = JSON.parse(event.data);
          for (const one of Array.isArray(value) ? value : [value]) if (isObject(one)) this.o.deliver(JSON.stringify(one));
        }, this.o.ready);
      } catch (error) {
        if (!abort.signal.aborted) this.o.warn(`the server's event stream ended: ${causeOf(error)}`);
      }
    })();
  }

}

