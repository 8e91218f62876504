/** Server-sent events of a response body, one at a time (eventsource-parser reads the field grammar). */
import { createParser, type EventSourceMessage } from "eventsource-parser";

/** A replay reads one answer: a stream larger than this is cut (promise 3: bounded by bytes). */
export const MAX_STREAM_BYTES = 64 * 1024 * 1024;

export async function* sseEvents(body: AsyncIterable<Buffer | string>, maxBytes = MAX_STREAM_BYTES): AsyncGenerator<EventSourceMessage> {
  const queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => queue.push(e) });
  const decoder = new TextDecoder();
  let seen = 0;
  for await (const chunk of body) {
    seen += chunk.length;
    if (seen > maxBytes) throw new Error(`the event stream passed ${maxBytes} bytes without the answer`);
    parser.feed(typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true }));
    while (queue.length > 0) yield queue.shift()!;
  }
}
