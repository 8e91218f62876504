/**
 * Streamable HTTP (2025-03-26 on, and the stateless 2026-07-28 revision) from the replay's side: each
 * message a POST; the answer a JSON body or an event stream; the session id and protocol version echoed
 * in headers; the session DELETEd at the end. Written on undici rather than with the SDK client: a replay
 * must send the captured protocol version and capabilities, which the SDK client picks itself.
 */
import { request, type Dispatcher } from "undici";
import { answers, isServerRequest, messagesOf, ReplayError, refuseServerRequest, type Answer, type Channel, type Message } from "./channel.js";
import { MAX_STREAM_BYTES, sseEvents } from "./sse-events.js";
import { statelessHeaders } from "./stateless.js";

export interface HttpChannelOptions {
  url: string;
  dispatcher: Dispatcher;
  /** `--header` values, sent on every request. */
  headers: Record<string, string>;
  /** The stateless revision: no session, the method and name repeated in headers. */
  stateless: boolean;
  timeoutMs: number;
}

export class HttpChannel implements Channel {
  private session: string | null = null;
  private protocolVersion: string | null = null;

  constructor(private readonly o: HttpChannelOptions) {}

  /** After initialize: the version every later request names (2025-06-18 on). */
  useProtocolVersion(version: string | null): void {
    this.protocolVersion = version;
  }

  async request(message: Message): Promise<Answer> {
    const res = await this.post(message);
    const type = String(res.headers["content-type"] ?? "");
    const others: Message[] = [];
    if (type.includes("text/event-stream")) {
      for await (const event of sseEvents(res.body)) {
        for (const m of messagesOf(event.data)) {
          if (answers(m, message.id)) {
            res.body.destroy();
            return { message: m, others };
          }
          others.push(m);
          if (isServerRequest(m)) await this.notify(refuseServerRequest(m));
        }
      }
      throw new ReplayError(`the server's event stream ended without an answer to ${String(message.method)}`);
    }
    const text = await readText(res.body);
    const found = messagesOf(text).find((m) => answers(m, message.id));
    if (!found) throw new ReplayError(`HTTP ${res.statusCode} without an answer to ${String(message.method)}${text ? `: ${text.slice(0, 300)}` : ""}`);
    return { message: found, others };
  }

  async notify(message: Message): Promise<void> {
    const res = await this.post(message);
    await res.body.dump();
  }

  async close(): Promise<void> {
    if (this.session === null) return;
    // A server that keeps no sessions answers 405; either way the session is over for us.
    const res = await request(this.o.url, { method: "DELETE", dispatcher: this.o.dispatcher, headers: this.headers(), headersTimeout: this.o.timeoutMs, bodyTimeout: this.o.timeoutMs }).catch(() => null);
    await res?.body.dump();
    this.session = null;
  }

  private async post(message: Message): Promise<Dispatcher.ResponseData> {
    const res = await request(this.o.url, {
      method: "POST",
      dispatcher: this.o.dispatcher,
      headers: { ...this.headers(), "content-type": "application/json", accept: "application/json, text/event-stream", ...(this.o.stateless ? statelessHeaders(message) : {}) },
      body: JSON.stringify(message),
      headersTimeout: this.o.timeoutMs,
      bodyTimeout: this.o.timeoutMs,
      // The whole answer, stream included, within --timeout: a server that drips events does not hold it.
      signal: AbortSignal.timeout(this.o.timeoutMs),
    });
    const session = res.headers["mcp-session-id"];
    if (typeof session === "string" && this.session === null) this.session = session;
    if (res.statusCode === 401 || res.statusCode === 403) {
      const text = await readText(res.body).catch(() => "");
      if (res.statusCode === 401) throw new ReplayError(`the server answered 401 (credentials needed): the log holds none; pass them with --header 'Authorization: Bearer …'`);
      // 403 is also how the proxy refuses in enforce mode: its body says why.
      throw new ReplayError(`HTTP 403${text ? `: ${text.slice(0, 500)}` : ""}`);
    }
    return res;
  }

  private headers(): Record<string, string> {
    return {
      ...this.o.headers,
      ...(this.session !== null ? { "mcp-session-id": this.session } : {}),
      ...(this.protocolVersion !== null && this.protocolVersion >= "2025-06-18" ? { "mcp-protocol-version": this.protocolVersion } : {}),
    };
  }
}

/** A body as text, bounded. */
export async function readText(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_STREAM_BYTES) throw new ReplayError(`the answer passed ${MAX_STREAM_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
