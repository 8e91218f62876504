/**
 * Legacy HTTP+SSE (2024-11-05) from the replay's side: a GET event stream whose `endpoint` event names
 * where to POST; every answer comes back on the stream.
 */
import { request, type Dispatcher } from "undici";
import { AnswerWaiter, messagesOf, ReplayError, type Answer, type Channel, type Message } from "./channel.js";
import { readText } from "./http-channel.js";
import { sseEvents } from "./sse-events.js";

export interface LegacyChannelOptions {
  /** The stream's URL on the replay's proxy. */
  url: string;
  /** The server's own origin: an endpoint it names absolutely there is reached through the replay's proxy. */
  upstreamOrigin: string;
  dispatcher: Dispatcher;
  headers: Record<string, string>;
  timeoutMs: number;
}

export class LegacyChannel implements Channel {
  private endpoint: string | null = null;
  private readonly waiter = new AnswerWaiter((reply) => void this.post(reply).catch(() => {}));
  private stream: Dispatcher.ResponseData | null = null;

  private constructor(private readonly o: LegacyChannelOptions) {}

  /** Opens the stream and waits for its `endpoint` event. */
  static async open(o: LegacyChannelOptions): Promise<LegacyChannel> {
    const channel = new LegacyChannel(o);
    const res = await request(o.url, { method: "GET", dispatcher: o.dispatcher, headers: { ...o.headers, accept: "text/event-stream" }, headersTimeout: o.timeoutMs, bodyTimeout: 0 });
    if (res.statusCode === 401) {
      await res.body.dump();
      throw new ReplayError("the server answered 401 (credentials needed): the log holds none; pass them with --header 'Authorization: Bearer …'");
    }
    if (res.statusCode !== 200) throw new ReplayError(`GET ${new URL(o.url).pathname}: HTTP ${res.statusCode}: ${(await readText(res.body).catch(() => "")).slice(0, 300)}`);
    channel.stream = res;
    const endpoint = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ReplayError(`no endpoint event on the stream within ${o.timeoutMs} ms`)), o.timeoutMs);
      void channel.read(res, () => {
        clearTimeout(timer);
        resolve();
      }, (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    await endpoint;
    return channel;
  }

  async request(message: Message): Promise<Answer> {
    const answer = this.waiter.wait(message.id, String(message.method), this.o.timeoutMs);
    await this.post(message);
    return answer;
  }

  async notify(message: Message): Promise<void> {
    await this.post(message);
  }

  async close(): Promise<void> {
    this.stream?.body.destroy();
    this.stream = null;
  }

  private async post(message: Message): Promise<void> {
    const res = await request(this.endpoint!, {
      method: "POST",
      dispatcher: this.o.dispatcher,
      headers: { ...this.o.headers, "content-type": "application/json" },
      body: JSON.stringify(message),
      headersTimeout: this.o.timeoutMs,
      bodyTimeout: this.o.timeoutMs,
    });
    const text = await readText(res.body);
    if (res.statusCode >= 300) {
      const err = new ReplayError(res.statusCode === 401 ? "the server answered 401: pass credentials with --header 'Authorization: Bearer …'" : `POST ${String(message.method ?? "answer")}: HTTP ${res.statusCode}${text ? `: ${text.slice(0, 500)}` : ""}`);
      this.waiter.reject(err);
    }
  }

  private async read(res: Dispatcher.ResponseData, onEndpoint: (url: string) => void, onFail: (err: Error) => void): Promise<void> {
    try {
      for await (const event of sseEvents(res.body)) {
        if (event.event === "endpoint") {
          // Relative to the stream's URL, as the SDK reads it; one on the server's own origin goes through the
          // replay's proxy too; an endpoint elsewhere is not followed.
          let url = new URL(event.data.trim(), this.o.url);
          const local = new URL(this.o.url).origin;
          if (url.origin === this.o.upstreamOrigin) url = new URL(`${url.pathname}${url.search}`, local);
          if (url.origin !== local) throw new ReplayError(`the server's endpoint ${url.origin} is not where its stream is`);
          this.endpoint = url.href;
          onEndpoint(url.href);
          continue;
        }
        for (const m of messagesOf(event.data)) this.waiter.deliver(m);
      }
      throw new ReplayError("the server closed its event stream");
    } catch (err) {
      if (this.stream === null) return; // closed by us
      const ended = err instanceof Error ? err : new Error(String(err));
      onFail(ended);
      this.waiter.fail(ended);
    }
  }
}
