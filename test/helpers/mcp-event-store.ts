/**
 * In-memory EventStore for resumable Streamable HTTP streams, as used by the
 * reference server's own HTTP entry point (but returning the stream id, as
 * the SDK's EventStore contract requires).
 */
import { randomUUID } from "node:crypto";
import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export class InMemoryEventStore implements EventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = randomUUID();
    this.events.set(eventId, { streamId, message });
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const last = this.events.get(lastEventId);
    if (!last) return "";
    let found = false;
    for (const [eventId, { streamId, message }] of this.events) {
      if (eventId === lastEventId) found = true;
      else if (found && streamId === last.streamId) await send(eventId, message);
    }
    return last.streamId;
  }

  get size(): number {
    return this.events.size;
  }
}
