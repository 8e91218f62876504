/**
 * `mock --legacy`: the 2024-11-05 HTTP+SSE transport on loopback. `GET /sse` opens a session's event
 * stream, whose first event names where to POST (`/message?sessionId=…`); every answer goes on the stream.
 */
import { randomUUID } from "node:crypto";
import type http from "node:http";
import type { MockServer, Reply } from "./mock-server.js";

/** Open streams at most: a stream is a held connection (promise 3). */
export const MAX_LEGACY_STREAMS = 256;

export class LegacySessions {
  private readonly streams = new Map<string, http.ServerResponse>();

  constructor(private readonly server: MockServer) {}

  /** `GET` of the stream; false when too many are open. */
  open(res: http.ServerResponse): boolean {
    if (this.streams.size >= MAX_LEGACY_STREAMS) return false;
    const id = randomUUID();
    this.streams.set(id, res);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`event: endpoint\ndata: /message?sessionId=${id}\n\n`);
    res.once("close", () => this.streams.delete(id));
    return true;
  }

  /** A POSTed body; false when its session is unknown. */
  post(sessionId: string | null, text: string): boolean {
    const stream = sessionId === null ? undefined : this.streams.get(sessionId);
    if (!stream) return false;
    for (const reply of this.server.receiveText(text)) this.send(stream, reply);
    return true;
  }

  closeAll(): void {
    for (const res of this.streams.values()) res.end();
    this.streams.clear();
  }

  private send(stream: http.ServerResponse, reply: Reply): void {
    const write = (): void => {
      if (!stream.writableEnded) stream.write(`event: message\ndata: ${JSON.stringify(reply.message)}\n\n`);
    };
    if (reply.atMs > 0) setTimeout(write, reply.atMs).unref();
    else write();
  }
}
