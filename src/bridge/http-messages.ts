/** What both HTTP transports of the bridge share: reading SSE and JSON bodies within bounds, and error answers. */
import { createParser } from "eventsource-parser";

/** JSON-RPC error code for a request the bridge could not get answered (server error range). */
export const BRIDGE_ERROR = -32099;

/** The answer the stdio client gets for a request the server did not answer. */
export function answerWithError(id: unknown, why: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error: { code: BRIDGE_ERROR, message: `mcp-wiretap bridge: ${why}` } });
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isRequest(value: unknown): value is { id: unknown; method: unknown } {
  return isObject(value) && typeof value.method === "string" && value.id !== undefined && value.id !== null;
}

/**
 * Each event of an SSE body (`name` "message" when the server gave none); one event may not exceed `max`
 * bytes. `ready` holds the next read until the stdio client has taken what was written (a server that
 * floods a slow client fills no buffer of ours).
 */
export async function readEvents(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  onEvent: (event: { name: string; data: string }) => void,
  ready: () => Promise<void> = async () => undefined,
): Promise<void> {
  if (!body) return;
  let pending = 0;
  const parser = createParser({
    onEvent: (event) => {
      pending = 0;
      if (event.data !== "") onEvent({ name: event.event ?? "message", data: event.data });
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    pending += chunk.byteLength;
    if (pending > max) throw new Error(`an event longer than ${max} bytes`);
    parser.feed(decoder.decode(chunk, { stream: true }));
    await ready();
  }
}

export async function readText(body: ReadableStream<Uint8Array> | null, max: number): Promise<string> {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) throw new Error(`a body longer than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function causeOf(error: unknown): string {
  const e = error as Error & { cause?: Error & { code?: string } };
  return e.cause ? `${e.cause.code ?? ""} ${e.cause.message}`.trim() : e.message;
}

export const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());
