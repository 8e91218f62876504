/**
 * Legacy HTTP+SSE (2024-11-05) from the replay's side: a GET event stream whose `endpoint` event names
 * where to POST; every answer comes back on the stream.
 */
import { request, type Dispatcher } from "undici";
import { answers, isServerRequest, messagesOf, ReplayError, refuseServerRequest, type Answer, type Channel, type Message } from "./channel.js";
import { readText } from "./http-channel.js";
import { sseEvents } from "./sse-events.js";

export interface LegacyChannelOptions {
  /** The stream's URL on the replay's proxy. */
  url: string;
  dispatcher: Dispatcher;
  headers: Record<string, string>;
  timeoutMs: number;
}

interface Waiter {
  id: unknown;
  others: Message[];
  resolve(answer: Answer): void;
  reject(err: Error): void;
}

export class LegacyChannel implements Channel {
  private endpoint: string | null = null;
  private waiter: Waiter | null = null;
  private ended: Error | null = null;
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
    if (this.ended) throw this.ended;
    const answer = new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ReplayError(`no answer to ${String(message.method)} within ${this.o.timeoutMs} ms`)), this.o.timeoutMs);
      this.waiter = {
        id: message.id,
        others: [],
        resolve: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
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
      this.waiter?.reject(err);
      this.waiter = null;
    }
  }

  private async read(res: Dispatcher.ResponseData, onEndpoint: (url: string) => void, onFail: (err: Error) => void): Promise<void> {
    try {
      for await (const event of sseEvents(res.body)) {
        if (event.event === "endpoint") {
          // Relative to the stream's URL, as the SDK reads it; an endpoint elsewhere is not followed.
          const url = new URL(event.data.trim(), this.o.url);
          if (url.origin !== new URL(this.o.url).origin) throw new ReplayError(`the server's endpoint ${url.origin} is not where its stream is`);
          this.endpoint = url.href;
          onEndpoint(url.href);
          continue;
        }
        for (const m of messagesOf(event.data)) this.deliver(m);
      }
      throw new ReplayError("the server closed its event stream");
    } catch (err) {
      if (this.stream === null) return; // closed by us
      this.ended = err instanceof Error ? err : new Error(String(err));
      onFail(this.ended);
      this.waiter?.reject(this.ended);
      this.waiter = null;
    }
  }

  private deliver(m: Message): void {
    const w = this.waiter;
    if (w && answers(m, w.id)) {
      this.waiter = null;
      w.resolve({ message: m, others: w.others });
      return;
    }
    w?.others.push(m);
    if (isServerRequest(m)) void this.post(refuseServerRequest(m)).catch(() => {});
  }
}
