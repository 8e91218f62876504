/** What a replay needs of a transport: send a request and read its answer, send a notification, end. */
export type Message = Record<string, unknown>;

export interface Answer {
  /** The response or error that answers the request. */
  message: Message;
  /** What came before it on the way: progress, logging, server requests (answered with an error). */
  others: Message[];
}

export interface Channel {
  request(message: Message): Promise<Answer>;
  notify(message: Message): Promise<void>;
  /** Ends the session (Streamable HTTP: DELETE; legacy: the stream closed; stdio: stdin closed). */
  close(): Promise<void>;
}

/** A failure of the exchange itself (no answer to show), said so the user knows what to change. */
export class ReplayError extends Error {}

/** Answer to a request the server sends its client during a replay: a replay has nobody to ask. */
export function refuseServerRequest(request: Message): Message {
  return { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "a replay by mcp-wiretap does not answer server requests" } };
}

/** Whether `m` answers the request with `id`. */
export function answers(m: Message, id: unknown): boolean {
  return m.id === id && (Object.hasOwn(m, "result") || Object.hasOwn(m, "error")) && !Object.hasOwn(m, "method");
}

export function isServerRequest(m: Message): boolean {
  return typeof m.method === "string" && m.id !== undefined && m.id !== null;
}

/** The JSON messages of one text: an object, or a batch (array) of them. */
export function messagesOf(text: string): Message[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  const list = Array.isArray(value) ? value : [value];
  return list.filter((m): m is Message => m !== null && typeof m === "object" && !Array.isArray(m));
}
