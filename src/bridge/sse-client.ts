/**
 * The HTTP side of `mcp-wiretap bridge --transport sse`: the legacy HTTP+SSE transport (MCP 2024-11-05). A
 * GET opens the server's event stream, whose `endpoint` event names where to POST; every message of the
 * stream goes to the stdio client, one line each. Requests go through the proxy like the Streamable ones.
 */
import { fetch } from "undici";
import { answerWithError, causeOf, isObject, isRequest, readEvents } from "./http-messages.js";
import type { BridgeClientOptions } from "./streamable-client.js";

export class SseClient {
  private readonly stream = new AbortController();
  private readonly endpoint: Promise<string | null>;

  constructor(private readonly o: BridgeClientOptions) {
    this.endpoint = new Promise((resolve) => {
      void this.listen(resolve).finally(() => resolve(null));
    });
  }

  async send(message: unknown): Promise<void> {
    const requests = (Array.isArray(message) ? message : [message]).filter(isRequest);
    const failAll = (why: string): void => {
      this.o.warn(why);
      for (const r of requests) this.o.deliver(answerWithError(r.id, why));
    };
    const endpoint = await this.endpoint;
    if (endpoint === null) return failAll(`the server's event stream at ${this.o.url} is closed`);
    try {
      const response = await fetch(endpoint, { method: "POST", headers: { ...this.o.headers, "content-type": "application/json" }, body: JSON.stringify(message), dispatcher: this.o.dispatcher });
      await response.body?.cancel();
      if (!response.ok) failAll(`the server answered HTTP ${response.status}`);
    } catch (error) {
      failAll(`cannot reach ${endpoint}: ${causeOf(error)}`);
    }
  }

  async close(): Promise<void> {
    this.stream.abort();
  }

  private async listen(found: (endpoint: string) => void): Promise<void> {
    try {
      const response = await fetch(this.o.url, { method: "GET", headers: { ...this.o.headers, accept: "text/event-stream" }, dispatcher: this.o.dispatcher, signal: this.stream.signal });
      if (!response.ok) {
        await response.body?.cancel();
        this.o.warn(`the server answered HTTP ${response.status} to the event stream request`);
        return;
      }
      await readEvents(response.body, this.o.maxBodyBytes, (event) => {
        if (event.name === "endpoint") {
          // Only where the stream came from: a server may not send the client's messages (and headers) elsewhere.
          const endpoint = new URL(event.data, this.o.url);
          if (endpoint.origin === new URL(this.o.url).origin) found(endpoint.href);
          else this.o.warn(`the server named an endpoint of another origin (${endpoint.origin}): not used`);
        } else if (event.name === "message") {
          const value: unknown = JSON.parse(event.data);
          for (const one of Array.isArray(value) ? value : [value]) if (isObject(one)) this.o.deliver(JSON.stringify(one));
        }
      }, this.o.ready);
      this.o.warn("the server's event stream ended");
    } catch (error) {
      if (!this.stream.signal.aborted) this.o.warn(`the server's event stream ended: ${causeOf(error)}`);
    }
  }
}
